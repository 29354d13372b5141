import { html, type Html } from '../web/html.js';
import type { SsoConnectionView } from '../../../features/identity/sso/sso.service.js';
import { badge, dataTable } from './components.js';

/** Staff: the OpenID Providers people sign in with, as configured, never a client secret. */
export function signOnBody(connections: SsoConnectionView[], passwordSignIn: 'everyone' | 'staff'): Html {
  return html`<p>Connections come from the platform's configuration (<code>DIDYMA_OIDC_CONNECTIONS</code>, the chart's <code>sso.connections</code>); they change with it, not here.
Password sign-in: ${passwordSignIn === 'staff' ? 'staff only' : 'everyone'}.</p>
${dataTable({
  caption: 'Sign-on connections',
  headers: ['Connection', 'Issuer', 'Client', 'Groups claim', 'Workspaces and roles', 'Staff groups', 'E-mail domains', 'New people'],
  rows: connections.map((c) => [
    html`${c.display_name} <code>${c.id}</code>`,
    html`<code>${c.issuer}</code>`,
    html`<code>${c.client_id}</code> ${c.has_client_secret ? badge('secret set', 'ok') : badge('public', 'off')}`,
    html`<code>${c.groups_claim}</code>`,
    list(c.workspace_roles.map((g) => `${g.group} → ${g.workspace} (${g.role})`)),
    list(c.staff_groups),
    list(c.allowed_email_domains, 'any'),
    (c.create_users ? 'created at first sign-in' : 'invited only') + (c.require_mapped_group ? ', a mapped group required' : ''),
  ]),
  empty: 'No connections: people sign in with a password only.',
})}`;
}

function list(items: string[], none = 'none'): Html {
  return items.length ? html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>` : html`${none}`;
}
