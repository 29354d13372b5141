import type { Principal } from '../../../features/auth/principal.js';
import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, checkbox, csrfField, selectField, textField, type Choice } from './components.js';

export interface Invitation {
  email: string;
  workspace: string;
  role: string;
  registered: boolean;
  expires_at: string;
  workspaces: string[];
}

export interface RegistrationDraft {
  name?: string;
  surname?: string;
  preferred_language?: string;
  accept_terms?: boolean;
  accept_privacy?: boolean;
}

export interface LegalLinks {
  termsUrl?: string;
  privacyUrl?: string;
}

export const LANGUAGES: Choice[] = [
  { value: 'en', label: 'English' },
  { value: 'de', label: 'Deutsch' },
  { value: 'es', label: 'Español' },
  { value: 'fr', label: 'Français' },
  { value: 'it', label: 'Italiano' },
  { value: 'nl', label: 'Nederlands' },
  { value: 'pl', label: 'Polski' },
  { value: 'pt', label: 'Português' },
  { value: 'pt-BR', label: 'Português (Brasil)' },
  { value: 'sv', label: 'Svenska' },
];

/** The strength rules of features/auth/passwords.ts, as the form explains them. */
export const PASSWORD_RULES = 'At least 12 characters with three of: lower-case letters, upper-case letters, digits, symbols; not containing the name part of your e-mail.';

export interface RegisterFormOptions {
  csrfToken: string;
  token: string;
  invitation: Invitation;
  draft?: RegistrationDraft;
  passwordProblem?: string;
  links: LegalLinks;
}

export function registerBody(options: RegisterFormOptions): Html {
  const { invitation, draft = {} } = options;
  return html`${invitationSummary(invitation)}
<form class="card stack" method="post" action="${at('/register')}">
  ${csrfField(options.csrfToken)}
  <input type="hidden" name="token" value="${options.token}">
  <div class="field"><span class="label">E-mail</span><p class="static" id="invited-email">${invitation.email}</p></div>
  <div class="row">
    ${textField({ name: 'name', label: 'Name', value: draft.name, required: true, autocomplete: 'given-name', maxlength: 100 })}
    ${textField({ name: 'surname', label: 'Surname', value: draft.surname, required: true, autocomplete: 'family-name', maxlength: 100 })}
  </div>
  ${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', minlength: 12, maxlength: 128, hint: PASSWORD_RULES, problem: options.passwordProblem })}
  ${textField({ name: 'password_confirm', label: 'Repeat the password', type: 'password', required: true, autocomplete: 'new-password', maxlength: 128 })}
  ${selectField({ name: 'preferred_language', label: 'Preferred language', choices: LANGUAGES, value: draft.preferred_language ?? 'en' })}
  ${checkbox({ name: 'accept_terms', label: legalLabel('the terms of service', options.links.termsUrl), checked: draft.accept_terms, required: true })}
  ${checkbox({ name: 'accept_privacy', label: legalLabel('the privacy policy', options.links.privacyUrl), checked: draft.accept_privacy, required: true })}
  <button type="submit" class="button primary">Create account</button>
</form>`;
}

/** An already registered e-mail: accept while signed in as it, or sign in first. */
export function acceptBody(options: { csrfToken: string; token: string; invitation: Invitation; principal?: Principal }): Html {
  const { invitation, principal } = options;
  const registerUrl = at(`/register?token=${encodeURIComponent(options.token)}`);
  if (!principal) {
    return html`${invitationSummary(invitation)}
<div class="card stack">
  <p><strong>${invitation.email}</strong> already has an account. Sign in with it to accept the invitation.</p>
  <p><a class="button primary" href="${at(`/sign-in?next=${encodeURIComponent(registerUrl)}`)}">Sign in to accept</a></p>
</div>`;
  }
  if (principal.user.email !== invitation.email) {
    return html`${invitationSummary(invitation)}
<div class="card stack">
  <p>This invitation was sent to <strong>${invitation.email}</strong>, but you are signed in as <strong>${principal.user.email}</strong>.</p>
  <p>Sign out, then open the invitation link again and sign in as ${invitation.email}.</p>
</div>`;
  }
  return html`${invitationSummary(invitation)}
<form class="card stack" method="post" action="${at('/register/accept')}">
  ${csrfField(options.csrfToken)}
  <input type="hidden" name="token" value="${options.token}">
  <p>You are signed in as <strong>${invitation.email}</strong>.</p>
  <button type="submit" class="button primary">Join ${invitation.workspace}</button>
</form>`;
}

/** What an unusable invitation link tells its holder. */
export function invitationProblemBody(code: string, message: string): Html {
  const advice =
    code === 'invitation_used'
      ? html`If it was you who used it, <a href="${at('/sign-in')}">sign in</a>. Otherwise ask a supervisor of the workspace for a new invitation.`
      : html`Ask a supervisor of the workspace to send you a new invitation.`;
  return html`<div class="card stack"><p class="lead">${message}</p><p>${advice}</p></div>`;
}

export function invitationProblemTitle(code: string): string {
  if (code === 'invitation_used') return 'Invitation already used';
  if (code === 'invitation_expired') return 'Invitation expired';
  if (code === 'not_found') return 'Invitation not found';
  return 'Invitation cannot be accepted';
}

function invitationSummary(invitation: Invitation): Html {
  const others = invitation.workspaces.filter((w) => w !== invitation.workspace);
  return html`<p class="lead">You are invited to <strong>${invitation.workspace}</strong> as ${badge(invitation.role)}.${others.length ? html` Open invitations to ${others.join(', ')} are accepted too.` : ''}</p>
<p class="muted">The invitation is valid until ${invitation.expires_at.slice(0, 16).replace('T', ' ')} UTC.</p>`;
}

function legalLabel(document: string, url: string | undefined): Html {
  return url ? html`I accept <a href="${url}" target="_blank" rel="noopener noreferrer">${document}</a>` : html`I accept ${document}`;
}
