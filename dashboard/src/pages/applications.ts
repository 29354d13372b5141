import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, code, csrfField, dataTable, postButton, secretOnce, selectField, textField, timeText } from './components.js';

export interface ApplicationItem {
  id: number;
  name: string;
  client_id: string;
  role: string;
  created_at: string | null;
  updated_at: string | null;
}

export interface Credentials {
  name: string;
  client_id: string;
  client_secret: string;
  /** A rotation, not a creation. */
  rotated: boolean;
}

export interface ApplicationsPage {
  csrfToken: string;
  workspace: string;
  applications: ApplicationItem[];
  credentials?: Credentials;
  draft?: { name: string; role: string };
}

export function applicationsBody(page: ApplicationsPage): Html {
  return html`${page.credentials ? credentials(page.credentials, page.workspace) : ''}
<section aria-labelledby="create-application">
  <h2 id="create-application">Create an OAuth application</h2>
  <form class="card row-form" method="post" action="${at('/applications')}">
    ${csrfField(page.csrfToken)}
    ${textField({ name: 'name', label: 'Name', value: page.draft?.name, required: true, maxlength: 100 })}
    ${selectField({ name: 'role', label: 'Acts as', value: page.draft?.role ?? 'user', choices: [{ value: 'user', label: 'user' }, { value: 'supervisor', label: 'supervisor' }], hint: 'The role its tokens have in this workspace.' })}
    <button type="submit" class="button primary">Create application</button>
  </form>
</section>
<section aria-labelledby="application-list">
  <h2 id="application-list">Applications of this workspace</h2>
  ${dataTable({
    caption: 'OAuth applications',
    headers: ['Name', 'Client id', 'Role', 'Created', 'Secret changed', 'Actions'],
    rows: page.applications.map((app) => [app.name, code(app.client_id), badge(app.role), timeText(app.created_at), timeText(app.updated_at), actions(app, page.csrfToken)]),
    empty: 'No OAuth applications yet.',
  })}
</section>`;
}

function credentials(created: Credentials, workspace: string): Html {
  return html`<section class="card highlight" aria-labelledby="new-credentials">
  <h2 id="new-credentials">${created.rotated ? `New secret of "${created.name}"` : `Application "${created.name}" created`}</h2>
  <p><strong>Copy the secret now: it is shown only once.</strong>${created.rotated ? ' The previous secret no longer works.' : ''}</p>
  ${secretOnce({ id: 'client-id', label: 'Client id', value: created.client_id })}
  ${secretOnce({ id: 'client-secret', label: 'Client secret', value: created.client_secret })}
  <p class="hint">Obtain a token with <code>POST /o/token/</code> (form fields <code>grant_type=client_credentials</code>, <code>client_id</code>, <code>client_secret</code>, <code>workspace=${workspace}</code>).</p>
</section>`;
}

function actions(app: ApplicationItem, csrf: string): Html {
  const base = at(`/applications/${app.id}`);
  return html`<div class="actions">
  ${postButton({ action: `${base}/rotate`, csrf, label: 'Rotate secret', confirm: `Replace the secret of "${app.name}"? The current one stops working.`, accessibleLabel: `Rotate the secret of ${app.name}` })}
  ${postButton({ action: `${base}/delete`, csrf, label: 'Delete', variant: 'danger', confirm: `Delete the application "${app.name}"? Its tokens stop working at once.`, accessibleLabel: `Delete application ${app.name}` })}
</div>`;
}
