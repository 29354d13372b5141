import type { InvocationRow, SessionRow } from './store.js';

export function presentSession(row: SessionRow, model: { model_code: string; version: string }, workspace: string) {
  return {
    id: row.id,
    user_id: String(row.user_id),
    model_key: { model_code: model.model_code, model_version: model.version },
    workspace,
    state: row.state,
    created_at: row.created_at.toISOString(),
  };
}

/** The API's Invocation; `related_to` is left out of the create response of a plain invocation. */
export function presentInvocation(row: InvocationRow, options: { omitRelatedTo?: boolean } = {}) {
  return {
    id: row.id,
    order: row.order,
    type: row.type,
    request: { session_id: row.session_id, request_type: row.request_type, body: row.body },
    status: row.status,
    response: row.status === 'COMPLETED' ? row.response : '',
    model_key: row.model_key,
    ...(options.omitRelatedTo && row.related_to === null ? {} : { related_to: row.related_to }),
    error: row.status === 'ERROR' ? (row.error ?? 'The invocation failed.') : null,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
