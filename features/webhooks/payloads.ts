import type { WebhookEvent } from './endpoints.store.js';

// The one place a webhook body is built, for every event type: `{type,
// timestamp, data}`, stored as text when it is queued and sent byte for byte
// on every attempt.

/** What an invocation's outcome event tells: the invocation, not its output. */
export interface InvocationOutcome {
  workspace: string;
  invocation_id: string;
  session_id: string;
  model_code: string;
  model_version: string;
  type: string;
  order: number;
  status: 'COMPLETED' | 'ERROR' | 'CANCELLED';
  error: string | null;
  created_at: Date;
  completed_at: Date;
}

/** The event an invocation's final status makes. */
export const OUTCOME_EVENTS = {
  COMPLETED: 'invocation.completed',
  ERROR: 'invocation.failed',
  CANCELLED: 'invocation.cancelled',
} as const satisfies Record<InvocationOutcome['status'], WebhookEvent>;

const body = (type: WebhookEvent, timestamp: Date, data: Record<string, unknown>) => JSON.stringify({ type, timestamp: timestamp.toISOString(), data });

/** `invocation.completed`, `.failed` or `.cancelled`, stamped with the time the invocation finished. */
export function invocationOutcomePayload(outcome: InvocationOutcome): string {
  const { workspace, invocation_id, session_id, model_code, model_version, type, order, status, error, created_at, completed_at } = outcome;
  const data = { workspace, invocation_id, session_id, model_code, model_version, type, order, status, error, created_at: created_at.toISOString(), completed_at: completed_at.toISOString() };
  return body(OUTCOME_EVENTS[status], completed_at, data);
}

/** `dataset.exported`, with the dataset as the API presents it. */
export const datasetExportedPayload = (dataset: Record<string, unknown>, at = new Date()): string => body('dataset.exported', at, dataset);

/** `alias.rolled_back`: a guard of an alias's traffic policy tripped and its candidate's weight went to the primary. */
export const aliasRolledBackPayload = (rollback: Record<string, unknown>, at = new Date()): string => body('alias.rolled_back', at, rollback);
