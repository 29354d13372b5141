import type { Attributes } from '@opentelemetry/api';
import type { KeepRule } from '../../infra/telemetry/kept-runs.js';
import type { InvocationRow } from './store.js';

/** The attribute that follows an invocation's status as its run moves it. */
export const STATUS_ATTRIBUTE = 'didyma.invocation.status';

/** What a span of an invocation says about it: whose, which model, which invocation, which status; never its body. */
export function invocationAttributes(row: Pick<InvocationRow, 'id' | 'workspace_id' | 'type' | 'status' | 'priority'>, model: { model_code: string; version: string }): Attributes {
  return {
    'didyma.workspace.id': row.workspace_id,
    'didyma.model.code': model.model_code,
    'didyma.model.version': model.version,
    'didyma.invocation.id': row.id,
    'didyma.invocation.type': row.type,
    [STATUS_ATTRIBUTE]: row.status,
    'didyma.invocation.priority': row.priority,
  };
}

/**
 * Which runs a trace holds whatever its sampler decided at the request: one
 * that failed (ERROR, or threw) and one that took `slowMs` or longer, so that
 * looking up the trace id of a failed or slow invocation finds its run.
 */
export function failedOrSlowerThan(slowMs: number): KeepRule {
  return ({ attributes, durationMs, error }) => {
    if (error !== undefined || attributes[STATUS_ATTRIBUTE] === 'ERROR') return 'failed';
    return durationMs >= slowMs ? 'slow' : undefined;
  };
}
