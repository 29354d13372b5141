import type { Db } from '../../../infra/db/database.js';
import { RateLimiter } from '../../auth/rate-limit.js';
import type { RateLimitStore } from '../../auth/rate-limit.store.js';
import { sourceOf } from '../../auth/source.js';

/** Seconds a sign-in may take between leaving for the provider and coming back. */
export const SIGN_IN_TTL_SECONDS = 600;

/** Where a start was counted: kept with the sign-in, to take the count back when it finishes. */
export interface StartCount {
  keyHash: string;
  resetAt: Date;
}

/**
 * The bound on anonymous sign-in starts: each start holds a pending row for
 * up to the life of a sign-in, so one source may hold only so many unfinished
 * ones at once. Counted in PostgreSQL, so every auth replica counts into the
 * same window; a start that finishes, or fails before it is kept, is taken back.
 */
export class SignInStarts {
  private readonly limiter: RateLimiter;

  constructor(db: Db, store: RateLimitStore, perSource: number, now: () => number) {
    // A window as long as a start lives: what it counted has finished or ended by the time it closes.
    this.limiter = new RateLimiter(db, store, { limit: perSource, windowMs: SIGN_IN_TTL_SECONDS * 1000 }, now);
  }

  /** Counts a start from `clientAddress`; throws RateLimitedError (429) past the limit. */
  count(clientAddress: string): Promise<StartCount> {
    return this.limiter.take(`sso-start:${sourceOf(clientAddress)}`);
  }

  /** Takes back a start that finished (or never began): it no longer holds anything. */
  takeBack(start: StartCount): Promise<void> {
    return this.limiter.forgive({ ...start, count: 0 });
  }
}
