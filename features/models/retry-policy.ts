import { FAILURE_KINDS, type FailureKind } from '../../infra/connectors/errors.js';

/**
 * How the executor retries a model's transient failures. `backoff_ms` absent:
 * the platform's DIDYMA_EXECUTOR_RETRY_BACKOFF_MS, read by the executor when
 * it retries, so a model registered without one follows the platform's setting.
 */
export interface RetryPolicy {
  max_attempts: number;
  backoff_ms?: number;
  backoff_multiplier: number;
  retry_on: FailureKind[];
}

/** As registration receives it: every field optional. */
export type RetryPolicyPayload = Partial<RetryPolicy>;

/** Today's behaviour before policies existed: 5 attempts, the platform's backoff doubled per attempt, every transient failure. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { max_attempts: 5, backoff_multiplier: 2, retry_on: [...FAILURE_KINDS] };

/** The longest wait between two attempts, whatever the policy's growth: the delay must stay a valid interval. */
export const MAX_BACKOFF_MS = 3_600_000;

/** The stored policy of a registration: the payload's fields over the defaults (the OpenAPI schema checked their ranges). */
export function retryPolicyOf(payload: RetryPolicyPayload | undefined): RetryPolicy {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...payload, retry_on: [...new Set(payload?.retry_on ?? DEFAULT_RETRY_POLICY.retry_on)] };
  if (policy.backoff_ms === undefined) delete policy.backoff_ms;
  return policy;
}

/** A model's policy: its stored one, or the default for models registered before policies existed (null). */
export const policyOfModel = (stored: RetryPolicy | null): RetryPolicy => stored ?? DEFAULT_RETRY_POLICY;

/** The wait before the attempt after `attempt` (1 for the first) of a run, capped at MAX_BACKOFF_MS. */
export function backoffAfter(policy: RetryPolicy, attempt: number, platformBackoffMs: number): number {
  const base = policy.backoff_ms ?? platformBackoffMs;
  return Math.min(MAX_BACKOFF_MS, Math.round(base * policy.backoff_multiplier ** (attempt - 1)));
}
