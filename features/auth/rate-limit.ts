import type { Db } from '../../infra/db/database.js';
import { prepared } from '../../infra/db/prepared.js';
import { sha256 } from '../../infra/crypto/random.js';
import { RateLimitedError } from '../../kernel/errors/errors.js';

/**
 * Counts one attempt in the key's window, opening a new window when the last
 * one has ended; gives back the count and when the window ends. One statement:
 * concurrent attempts of several replicas serialise on the key's row.
 */
const HIT_SQL = `
insert into rate_limit_windows as w (key_hash, count, reset_at) values (?, 1, ?::timestamptz)
on conflict (key_hash) do update set
  count = case when w.reset_at <= ?::timestamptz then 1 else w.count + 1 end,
  reset_at = case when w.reset_at <= ?::timestamptz then excluded.reset_at else w.reset_at end
returning count, reset_at`;

/** Ended windows are deleted every this many attempts of a process. */
const PRUNE_EVERY = 500;

/**
 * Fixed-window attempt counter kept in PostgreSQL, so every auth replica
 * counts into the same windows: N replicas do not give an attacker N windows.
 */
export class RateLimiter {
  private hits = 0;

  constructor(
    private readonly db: Db,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one attempt for `key`; throws RateLimitedError (429) past the limit. */
  async hit(key: string): Promise<void> {
    const now = this.now();
    const at = new Date(now);
    const [row] = await prepared<{ count: number; reset_at: Date }>(this.db, 'rate-limit.hit', HIT_SQL, [sha256(key), new Date(now + this.windowMs), at, at]);
    const { count, reset_at: resetAt } = row!;
    await this.pruneNowAndThen(at);
    if (count > this.limit) throw new RateLimitedError(Math.max(1, Math.ceil((resetAt.getTime() - now) / 1000)));
  }

  /** Every PRUNE_EVERY attempts, deletes the windows that have ended (of any key, any replica). */
  private async pruneNowAndThen(at: Date): Promise<void> {
    this.hits = (this.hits + 1) % PRUNE_EVERY;
    if (this.hits === 0) await this.db('rate_limit_windows').where('reset_at', '<=', at).delete();
  }
}
