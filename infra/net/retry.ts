import { HttpStatusError, type HttpClientError, type Retryable } from './errors.js';

export interface RetrySettings {
  /** Attempts in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error surfaces at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { attempts: 3, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 30_000 };

/**
 * 429 and 503 say the server declined the request, so any method may repeat it;
 * 502 and 504 come from a gateway that may already have passed it on.
 */
export function retryableStatus(status: number): Retryable {
  if (status === 429 || status === 503) return 'always';
  if (status === 502 || status === 504) return 'idempotent';
  return 'never';
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How long to wait before attempt `attempt + 1`, or null to give up. Exponential
 * backoff with jitter so that many clients failing together do not retry in step.
 */
export function retryDelay(error: HttpClientError, attempt: number, idempotent: boolean, settings: RetrySettings, random: () => number = Math.random): number | null {
  if (attempt >= settings.attempts) return null;
  if (error.retryable === 'never' || (error.retryable === 'idempotent' && !idempotent)) return null;
  if (error instanceof HttpStatusError && error.retryAfterMs !== undefined) {
    return error.retryAfterMs <= settings.maxRetryAfterMs ? error.retryAfterMs : null;
  }
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
