import type { AttemptRow, InvocationRow, SessionRow } from './store.js';

export function presentSession(row: SessionRow, model: { model_code: string; version: string }, workspace: string) {
  return {
    id: row.id,
    user_id: String(row.user_id),
    model_key: { model_code: model.model_code, model_version: model.version },
    alias: row.alias ?? null,
    workspace,
    state: row.state,
    created_at: row.created_at.toISOString(),
  };
}

/** One attempt of an invocation, as the API's InvocationAttempt. */
export function presentAttempt(row: AttemptRow) {
  return {
    attempt: row.attempt,
    executor: row.executor,
    started_at: row.started_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
    outcome: row.outcome,
    error: row.error,
  };
}

/**
 * The API's Invocation; `related_to` is left out of the create response of a
 * plain invocation, and `attempts` given only where they were read (the single GET).
 */
export function presentInvocation(row: InvocationRow, options: { omitRelatedTo?: boolean; attempts?: AttemptRow[] } = {}) {
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
    ...(row.callback_url !== null && row.callback_url !== undefined && { callback_url: row.callback_url }),
    ...(options.attempts && { attempts: options.attempts.map(presentAttempt) }),
  };
}
