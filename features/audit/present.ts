import type { AuditRow } from './store.js';

/** An audit record as the API shows it. */
export interface AuditRecordView {
  id: string;
  created_at: string;
  actor: { type: AuditRow['actor_type']; user_id: number | null; id: string | null };
  workspace_id: number | null;
  action: string;
  method: string;
  path: string;
  resource: { type: string | null; id: string | null };
  outcome: number;
  request_id: string;
  trace_id: string | null;
  source_address: string | null;
  suppressed: number;
}

export function presentAuditRecord(row: AuditRow): AuditRecordView {
  return {
    id: row.id,
    created_at: new Date(row.created_at).toISOString(),
    actor: { type: row.actor_type, user_id: row.actor_user_id, id: row.actor_id },
    workspace_id: row.workspace_id,
    action: row.action,
    method: row.method,
    path: row.path,
    resource: { type: row.resource_type, id: row.resource_id },
    outcome: row.outcome,
    request_id: row.request_id,
    trace_id: row.trace_id,
    source_address: row.source_address,
    suppressed: row.suppressed,
  };
}
