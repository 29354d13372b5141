import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { csrfField, textField } from './components.js';

export interface SignInForm {
  csrfToken: string;
  email?: string;
  workspace?: string;
  next?: string;
  /** The OpenID Providers one may sign in with instead of a password. */
  connections: Array<{ id: string; display_name: string }>;
}

/** One button per single sign-on connection, each coming back to `next`. */
function ssoButtons(form: SignInForm): Html | '' {
  if (!form.connections.length) return '';
  const query = form.next ? `?next=${encodeURIComponent(form.next)}` : '';
  return html`<div class="card stack">
  ${form.connections.map((c) => html`<a class="button primary" href="${at(`/sso/${encodeURIComponent(c.id)}`)}${query}">Sign in with ${c.display_name}</a>`)}
</div>`;
}

export function signInBody(form: SignInForm): Html {
  return html`${ssoButtons(form)}<form class="card stack" method="post" action="${at('/sign-in')}">
  ${csrfField(form.csrfToken)}
  ${form.next ? html`<input type="hidden" name="next" value="${form.next}">` : ''}
  ${textField({ name: 'email', label: 'E-mail', type: 'email', value: form.email, required: true, autocomplete: 'username' })}
  ${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password' })}
  ${textField({ name: 'workspace', label: 'Workspace', value: form.workspace, autocomplete: 'off', hint: 'Leave empty to choose one after signing in.' })}
  <button type="submit" class="button primary">Sign in</button>
</form>
<p class="muted">New here? Accounts are created from an invitation: open the link a supervisor sent you.</p>`;
}
