import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, checkbox, csrfField, dataTable, postButton, textField, timeText } from './components.js';

export interface WorkspaceItem {
  id: number;
  name: string;
  disabled: boolean;
  created_at: string | null;
}

export interface WorkspacesPage {
  csrfToken: string;
  workspaces: WorkspaceItem[];
  total: number;
  draft?: { name: string; disabled: boolean };
}

export function workspacesBody(page: WorkspacesPage): Html {
  return html`<section aria-labelledby="create-workspace">
  <h2 id="create-workspace">Create a workspace</h2>
  <form class="card row-form" method="post" action="${at('/workspaces')}">
    ${csrfField(page.csrfToken)}
    ${textField({ name: 'name', label: 'Name', value: page.draft?.name, required: true, maxlength: 63, pattern: '[a-z0-9_\\-]+', hint: 'Lower-case letters, digits, hyphens and underscores; it cannot change later.' })}
    ${checkbox({ name: 'disabled', label: 'Create it disabled', checked: page.draft?.disabled })}
    <button type="submit" class="button primary">Create workspace</button>
  </form>
</section>
<section aria-labelledby="workspace-list">
  <h2 id="workspace-list">All workspaces (${page.total})</h2>
  ${dataTable({
    caption: 'Workspaces',
    headers: ['Name', 'Status', 'Created', 'Actions'],
    rows: page.workspaces.map((w) => [w.name, w.disabled ? badge('disabled', 'off') : badge('enabled', 'ok'), timeText(w.created_at), actions(w, page.csrfToken)]),
    empty: 'No workspaces.',
  })}
</section>`;
}

function actions(workspace: WorkspaceItem, csrf: string): Html {
  const base = at(`/workspaces/${workspace.id}`);
  return html`<div class="actions">
  ${workspace.disabled
    ? postButton({ action: `${base}/disabled`, csrf, label: 'Enable', fields: { disabled: 'false' }, accessibleLabel: `Enable workspace ${workspace.name}` })
    : postButton({ action: `${base}/disabled`, csrf, label: 'Disable', fields: { disabled: 'true' }, accessibleLabel: `Disable workspace ${workspace.name}` })}
  <a class="button danger" href="${base}/delete" aria-label="Delete workspace ${workspace.name}">Delete…</a>
</div>`;
}

/** Deleting is permanent, so the name must be typed to confirm (works without script). */
export function deleteWorkspaceBody(options: { csrfToken: string; workspace: WorkspaceItem; problem?: string }): Html {
  const { workspace } = options;
  return html`<div class="card stack">
  <p class="lead">Deleting <strong>${workspace.name}</strong> is permanent: every token, API token and application of it stops working, and its name can never be used again.</p>
  <form class="stack" method="post" action="${at(`/workspaces/${workspace.id}/delete`)}">
    ${csrfField(options.csrfToken)}
    ${textField({ name: 'confirm_name', label: `Type ${workspace.name} to confirm`, required: true, autocomplete: 'off', problem: options.problem })}
    <div class="actions">
      <button type="submit" class="button danger">Delete workspace</button>
      <a class="button secondary" href="${at('/workspaces')}">Cancel</a>
    </div>
  </form>
</div>`;
}
