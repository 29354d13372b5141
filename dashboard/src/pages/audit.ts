import type { AuditRecordView } from '../../../features/audit/present.js';
import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, dataTable, longCode, textField, timeText } from './components.js';

export interface AuditFilters {
  action?: string;
  actor?: string;
  resource_type?: string;
  resource_id?: string;
}

export interface AuditPage {
  records: AuditRecordView[];
  total: number;
  filters: AuditFilters;
  /** Staff read every workspace's records; a supervisor's are all of their own workspace, so the column would repeat it. */
  showWorkspace: boolean;
  /** The query of the next (older) page, when there is one. */
  older?: string;
}

/** The audit trail: filters, then the records newest first, a page at a time. */
export function auditBody(page: AuditPage): Html {
  const f = page.filters;
  return html`<form class="card row-form" method="get" action="${at('/audit')}">
  ${textField({ name: 'action', label: 'Action', type: 'search', value: f.action, hint: 'an operationId, such as createDeployment' })}
  ${textField({ name: 'actor', label: 'User id', type: 'search', value: f.actor, pattern: '[0-9]{1,10}' })}
  ${textField({ name: 'resource_type', label: 'Resource type', type: 'search', value: f.resource_type })}
  ${textField({ name: 'resource_id', label: 'Resource id', type: 'search', value: f.resource_id })}
  <button type="submit" class="button primary">Filter</button>
</form>
<p class="muted">${String(page.total)} ${page.total === 1 ? 'record matches' : 'records match'}. Each state-changing or refused request leaves one; none holds a body or a secret.</p>
${dataTable({
  caption: 'Audit records',
  headers: ['Time', 'Actor', ...(page.showWorkspace ? ['Workspace'] : []), 'Action', 'Target', 'Outcome', 'Source', 'Request id'],
  rows: page.records.map((r) => [
    timeText(r.created_at),
    actorText(r),
    ...(page.showWorkspace ? [r.workspace_id === null ? '—' : String(r.workspace_id)] : []),
    actionCode(r.action),
    r.resource.type ? html`${r.resource.type} ${r.resource.id ? longCode(r.resource.id) : ''}` : longCode(r.path),
    outcomeBadge(r.outcome, r.suppressed),
    r.source_address ?? '—',
    longCode(r.request_id),
  ]),
  empty: 'No audit records match.',
})}
${page.older ? html`<p><a class="button" href="${at(`/audit?${page.older}`)}">Older records</a></p>` : ''}`;
}

/** An action as code that breaks only before the inner slashes of its path (`dashboard:POST /sessions/:code…`), never inside an operationId. */
const actionCode = (action: string) => html`<code>${action.split(/(?<=\S)(?=\/)/).map((part, i) => (i === 0 ? part : html`<wbr>${part}`))}</code>`;

function actorText(record: AuditRecordView): Html | string {
  const { type, user_id, id } = record.actor;
  if (type === 'anonymous') return html`<span class="muted">anonymous</span>`;
  if (type === 'platform') return html`platform <span class="muted nowrap">(${id ?? ''})</span>`;
  const label = type === 'api_token' ? `API token ${id ?? ''}` : type === 'oauth_client' ? `OAuth client ${id ?? ''}` : 'user';
  return html`${label} <span class="muted nowrap">(user ${String(user_id)})</span>`;
}

function outcomeBadge(outcome: number, suppressed: number): Html {
  const tone = outcome < 400 ? 'ok' : outcome === 401 || outcome === 403 ? 'off' : 'info';
  return html`${badge(String(outcome), tone)}${suppressed ? html` <span class="muted">(+${String(suppressed)} dropped)</span>` : ''}`;
}
