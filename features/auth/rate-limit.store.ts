import type { Runner } from '../../infra/db/database.js';
import { prepared } from '../../infra/db/prepared.js';

export interface RateLimitWindowRow {
  key_hash: string;
  count: number;
  reset_at: Date;
}

/** Every query of `rate_limit_windows`. */
export interface RateLimitStore {
  /**
   * Counts one attempt in the key's window, opening a new window (ending at
   * `resetAt`) when the last one ended by `now`; gives back the count and when
   * the window ends.
   */
  hit(db: Runner, keyHash: string, resetAt: Date, now: Date): Promise<Pick<RateLimitWindowRow, 'count' | 'reset_at'>>;
  /** Takes one attempt back from the key's window ending at `resetAt` (a later window is left alone). */
  forgive(db: Runner, keyHash: string, resetAt: Date): Promise<void>;
  /** Deletes the key's window: its count starts again from nothing. */
  remove(db: Runner, keyHash: string): Promise<void>;
  /** Deletes the windows that ended by `now`, of any key. */
  removeEnded(db: Runner, now: Date): Promise<number>;
}

// One statement: concurrent attempts of several replicas serialise on the key's row.
const HIT_SQL = `
insert into rate_limit_windows as w (key_hash, count, reset_at) values (?, 1, ?::timestamptz)
on conflict (key_hash) do update set
  count = case when w.reset_at <= ?::timestamptz then 1 else w.count + 1 end,
  reset_at = case when w.reset_at <= ?::timestamptz then excluded.reset_at else w.reset_at end
returning count, reset_at`;

export const rateLimitStore: RateLimitStore = {
  hit: async (db, keyHash, resetAt, now) => (await prepared<Pick<RateLimitWindowRow, 'count' | 'reset_at'>>(db, 'rate-limit.hit', HIT_SQL, [keyHash, resetAt, now, now]))[0]!,
  forgive: async (db, keyHash, resetAt) => {
    await db<RateLimitWindowRow>('rate_limit_windows').where({ key_hash: keyHash, reset_at: resetAt }).where('count', '>', 0).decrement('count', 1);
  },
  remove: async (db, keyHash) => {
    await db<RateLimitWindowRow>('rate_limit_windows').where({ key_hash: keyHash }).delete();
  },
  removeEnded: (db, now) => db<RateLimitWindowRow>('rate_limit_windows').where('reset_at', '<=', now).delete(),
};
