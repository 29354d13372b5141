import type { Db } from '../../infra/db/database.js';
import { sha256 } from '../../infra/crypto/random.js';
import { RateLimitedError } from '../../kernel/errors/errors.js';
import type { RateLimitStore } from './rate-limit.store.js';

/** Ended windows are deleted every this many attempts of a process. */
const PRUNE_EVERY = 500;

export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** One attempt counted in a key's window, to take back once it turns out well. */
export interface Attempt {
  keyHash: string;
  resetAt: Date;
  /** Attempts in the window, this one included. */
  count: number;
}

/**
 * Fixed-window attempt counter kept in PostgreSQL, so every auth replica
 * counts into the same windows: N replicas do not give an attacker N windows.
 * An attempt is counted before it is checked, so concurrent guesses cannot
 * slip past the limit; one that succeeds is then forgiven, or resets its key.
 */
export class RateLimiter {
  private hits = 0;

  constructor(
    private readonly db: Db,
    private readonly store: RateLimitStore,
    private readonly rate: RateLimit,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts one attempt for `key` (part of the lock of the account whose key
   * hashes to `accountHash`, if any); throws RateLimitedError (429, with the
   * seconds left) past the limit.
   */
  async hit(key: string, accountHash: string | null = null): Promise<Attempt> {
    const attempt = await this.count(key, accountHash);
    if (attempt.count > this.rate.limit) throw new RateLimitedError(secondsUntil(attempt.resetAt, this.now()));
    return attempt;
  }

  /**
   * Takes one of the key's places (a thing held until given back, such as a
   * sign-in under way); past the limit, takes nothing and throws
   * RateLimitedError, so refusals never count against what is held.
   */
  async take(key: string): Promise<Attempt> {
    const attempt = await this.count(key, null);
    if (attempt.count <= this.rate.limit) return attempt;
    await this.forgive(attempt);
    throw new RateLimitedError(secondsUntil(attempt.resetAt, this.now()));
  }

  private async count(key: string, accountHash: string | null): Promise<Attempt> {
    const now = this.now();
    const at = new Date(now);
    const keyHash = sha256(key);
    const { count, reset_at: resetAt } = await this.store.hit(this.db, keyHash, new Date(now + this.rate.windowMs), at, accountHash);
    await this.pruneNowAndThen(at);
    return { keyHash, resetAt, count };
  }

  /** Takes back an attempt that succeeded: only failures count towards the limit. */
  async forgive(attempt: Attempt): Promise<void> {
    await this.store.forgive(this.db, attempt.keyHash, attempt.resetAt);
  }

  /** Clears the attempt's key: after a success, its earlier failures no longer count either. */
  async reset(attempt: Attempt): Promise<void> {
    await this.store.remove(this.db, attempt.keyHash);
  }

  /** Every PRUNE_EVERY attempts, deletes the windows that have ended (of any key, any replica). */
  private async pruneNowAndThen(at: Date): Promise<void> {
    this.hits = (this.hits + 1) % PRUNE_EVERY;
    if (this.hits === 0) await this.store.removeEnded(this.db, at);
  }
}

/** Whole seconds from `now` until `at`, at least one: what Retry-After says. */
export function secondsUntil(at: Date, now: number): number {
  return Math.max(1, Math.ceil((at.getTime() - now) / 1000));
}
