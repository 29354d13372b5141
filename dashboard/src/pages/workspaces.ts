import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, checkbox, csrfField, dataTable, postButton, textField, timeText } from './components.js';
import type { WorkspaceUsage } from '../workspace-usage.js';

export interface WorkspaceItem {
  id: number;
  name: string;
  disabled: boolean;
  created_at: string | null;
}

/** A workspace's share of the executors and its limits (null: no limit). */
export interface QuotaItem {
  share_weight: number;
  max_in_flight: number | null;
  max_queued: number | null;
}

export interface WorkspacesPage {
  csrfToken: string;
  workspaces: Array<WorkspaceItem & { quota?: QuotaItem; usage: WorkspaceUsage }>;
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
    headers: ['Name', 'Status', 'Weight', 'Usage and limits', 'Created', 'Actions'],
    rows: page.workspaces.map((w) => [
      w.name,
      w.disabled ? badge('disabled', 'off') : badge('enabled', 'ok'),
      w.quota ? String(w.quota.share_weight) : '—',
      w.quota ? usageText(w.usage, w.quota) : '—',
      timeText(w.created_at),
      actions(w, page.csrfToken),
    ]),
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
  <a class="button secondary" href="${base}/quota" aria-label="Weight and limits of workspace ${workspace.name}">Limits…</a>
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

/** Each limit with what the workspace uses of it now: "3 / 10 in flight". */
const usageText = (usage: WorkspaceUsage, quota: QuotaItem) =>
  html`${usedOf(usage.inFlight, quota.max_in_flight)} in flight<br>${usedOf(usage.queued, quota.max_queued)} queued`;

const usedOf = (used: number, limit: number | null) => (limit === null ? `${used} / any` : `${used} / ${limit}`);

/** What the quota form shows: the values as typed (after a mistake) or as stored; '' is no limit. */
export interface QuotaDraft {
  share_weight: string;
  max_in_flight: string;
  max_queued: string;
}

export const draftOf = (quota: QuotaItem): QuotaDraft => ({
  share_weight: String(quota.share_weight),
  max_in_flight: quota.max_in_flight === null ? '' : String(quota.max_in_flight),
  max_queued: quota.max_queued === null ? '' : String(quota.max_queued),
});

export function quotaBody(options: { csrfToken: string; workspace: WorkspaceItem; draft: QuotaDraft; problems?: Partial<Record<keyof QuotaDraft, string>> }): Html {
  const { workspace, draft, problems = {} } = options;
  const number = { pattern: '[0-9]+', autocomplete: 'off' };
  return html`<div class="card stack">
  <p class="lead">How <strong>${workspace.name}</strong> shares the executors with other workspaces that have work queued. Executors obey a change at their next call.</p>
  <form class="stack" method="post" action="${at(`/workspaces/${workspace.id}/quota`)}">
    ${csrfField(options.csrfToken)}
    ${textField({ name: 'share_weight', label: 'Weight', value: draft.share_weight, required: true, ...number, hint: 'From 1 to 1000; a workspace of weight 2 gets twice the calls of one of weight 1 when both have work queued.', problem: problems.share_weight })}
    ${textField({ name: 'max_in_flight', label: 'Most model calls at once', value: draft.max_in_flight, ...number, hint: 'Across all executors. Empty: no limit.', problem: problems.max_in_flight })}
    ${textField({ name: 'max_queued', label: 'Most invocations queued', value: draft.max_queued, ...number, hint: 'Past it, new invocations are refused with 429 until the queue shrinks. Empty: no limit.', problem: problems.max_queued })}
    <div class="actions">
      <button type="submit" class="button primary">Save limits</button>
      <a class="button secondary" href="${at('/workspaces')}">Cancel</a>
    </div>
  </form>
</div>`;
}
