import type { Runner } from '../../infra/db/database.js';
import { prepared } from '../../infra/db/prepared.js';

export interface RateLimitWindowRow {
  key_hash: string;
  count: number;
  reset_at: Date;
  /** The SHA-256 of the account key whose lock this window is part of; null for a window of no account. */
  account_hash: string | null;
}

/** Every query of `rate_limit_windows`. */
export interface RateLimitStore {
  /**
   * Counts one attempt in the key's window, opening a new window (ending at
   * `resetAt`) when the last one ended by `now`; gives back the count and when
   * the window ends.
   */
  hit(db: Runner, keyHash: string, resetAt: Date, now: Date, accountHash: string | null): Promise<Pick<RateLimitWindowRow, 'count' | 'reset_at'>>;
  /** Takes one attempt back from the key's window ending at `resetAt` (a later window is left alone). */
  forgive(db: Runner, keyHash: string, resetAt: Date): Promise<void>;
  /** Deletes the key's window: its count starts again from nothing. */
  remove(db: Runner, keyHash: string): Promise<void>;
  /** Deletes the windows that ended by `now`, of any key. */
  removeEnded(db: Runner, now: Date): Promise<number>;
  /** Keeps the key (no count) until `until`: a remembered fact such as a source's earlier success. */
  remember(db: Runner, keyHash: string, until: Date): Promise<void>;
  /** Whether the key has a window that has not ended by `now`. */
  isLive(db: Runner, keyHash: string, now: Date): Promise<boolean>;
  /** The windows of an account that have not ended by `now`, the largest count first. */
  ofAccount(db: Runner, accountHash: string, now: Date): Promise<RateLimitWindowRow[]>;
  /** Deletes every window of an account: its failures, from every source, no longer count. */
  removeAccount(db: Runner, accountHash: string): Promise<number>;
}

// One statement: concurrent attempts of several replicas serialise on the key's row.
const HIT_SQL = `
insert into rate_limit_windows as w (key_hash, count, reset_at, account_hash) values (?, 1, ?::timestamptz, ?)
on conflict (key_hash) do update set
  count = case when w.reset_at <= ?::timestamptz then 1 else w.count + 1 end,
  reset_at = case when w.reset_at <= ?::timestamptz then excluded.reset_at else w.reset_at end,
  account_hash = excluded.account_hash
returning count, reset_at`;

const REMEMBER_SQL = `
insert into rate_limit_windows as w (key_hash, count, reset_at) values (?, 0, ?::timestamptz)
on conflict (key_hash) do update set count = 0, reset_at = excluded.reset_at, account_hash = null`;

export const rateLimitStore: RateLimitStore = {
  hit: async (db, keyHash, resetAt, now, accountHash) =>
    (await prepared<Pick<RateLimitWindowRow, 'count' | 'reset_at'>>(db, 'rate-limit.hit', HIT_SQL, [keyHash, resetAt, accountHash, now, now]))[0]!,
  forgive: async (db, keyHash, resetAt) => {
    await db<RateLimitWindowRow>('rate_limit_windows').where({ key_hash: keyHash, reset_at: resetAt }).where('count', '>', 0).decrement('count', 1);
  },
  remove: async (db, keyHash) => {
    await db<RateLimitWindowRow>('rate_limit_windows').where({ key_hash: keyHash }).delete();
  },
  removeEnded: (db, now) => db<RateLimitWindowRow>('rate_limit_windows').where('reset_at', '<=', now).delete(),
  remember: async (db, keyHash, until) => {
    await db.raw(REMEMBER_SQL, [keyHash, until]);
  },
  isLive: async (db, keyHash, now) => (await db<RateLimitWindowRow>('rate_limit_windows').where({ key_hash: keyHash }).where('reset_at', '>', now).first('key_hash')) !== undefined,
  ofAccount: (db, accountHash, now) =>
    db<RateLimitWindowRow>('rate_limit_windows').where({ account_hash: accountHash }).where('reset_at', '>', now).orderBy([{ column: 'count', order: 'desc' }, 'key_hash']).limit(1000),
  removeAccount: (db, accountHash) => db<RateLimitWindowRow>('rate_limit_windows').where({ account_hash: accountHash }).delete(),
};
