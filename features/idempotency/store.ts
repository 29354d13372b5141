import type { Runner } from '../../infra/db/database.js';
import { prepared } from '../../infra/db/prepared.js';

/** Whose key it is and for what: a key is unique within its workspace, principal and operation. */
export interface KeyScope {
  workspaceId: number;
  /** `user-<id>` or `api-token-<id>`. */
  principal: string;
  /** The operation's id (`createInvocation`). */
  operation: string;
  key: string;
}

export interface IdempotencyRow {
  request_hash: string;
  state: 'in_flight' | 'done';
  holder: string | null;
  locked_until: Date | null;
  response_status: number | null;
  response_body: string | null;
  created_at: Date;
  expires_at: Date;
}

export interface NewClaim {
  requestHash: string;
  holder: string;
  lockedUntil: Date;
  now: Date;
  expiresAt: Date;
}

/** Every query of `idempotency_keys`. */
export interface IdempotencyStore {
  /** Inserts the key in flight for `holder`; false when a row for it already exists. */
  claim(db: Runner, scope: KeyScope, claim: NewClaim): Promise<boolean>;
  read(db: Runner, scope: KeyScope): Promise<IdempotencyRow | undefined>;
  /** Deletes the key's row if it expired, or if it is in flight with a lease that ran out, by `now`. */
  removeLapsed(db: Runner, scope: KeyScope, now: Date): Promise<boolean>;
  /** Moves the holder's lease on; false when the claim is no longer its own. */
  renew(db: Runner, scope: KeyScope, holder: string, lockedUntil: Date): Promise<boolean>;
  /** Stores the answer of the holder's claim: the key is done. */
  complete(db: Runner, scope: KeyScope, holder: string, status: number, body: string): Promise<boolean>;
  /** Frees the holder's claim, so a retry with the key runs again. */
  release(db: Runner, scope: KeyScope, holder: string): Promise<boolean>;
  /** Deletes up to `limit` rows expired by `now`, of any scope. */
  removeExpired(db: Runner, now: Date, limit: number): Promise<number>;
}

const PK = 'workspace_id = ? and principal = ? and operation = ? and key = ?';
const pk = (s: KeyScope) => [s.workspaceId, s.principal, s.operation, s.key];

// `do nothing`: of any number of concurrent claims, replicas included, exactly one inserts.
const CLAIM_SQL = `
insert into idempotency_keys (workspace_id, principal, operation, key, request_hash, state, holder, locked_until, created_at, expires_at)
values (?, ?, ?, ?, ?, 'in_flight', ?::uuid, ?::timestamptz, ?::timestamptz, ?::timestamptz)
on conflict do nothing
returning 1 as claimed`;

const READ_SQL = `
select request_hash, state, holder, locked_until, response_status, response_body, created_at, expires_at
from idempotency_keys where ${PK}`;

const REMOVE_LAPSED_SQL = `
delete from idempotency_keys
where ${PK} and (expires_at <= ?::timestamptz or (state = 'in_flight' and locked_until <= ?::timestamptz))
returning 1 as gone`;

// A bounded batch through the expiry index, so a purge never holds many row locks at once.
const REMOVE_EXPIRED_SQL = `
delete from idempotency_keys where ctid = any(array(
  select ctid from idempotency_keys where expires_at <= ?::timestamptz limit ?
))
returning 1 as gone`;

export const idempotencyStore: IdempotencyStore = {
  claim: async (db, scope, c) =>
    (await prepared(db, 'idempotency.claim', CLAIM_SQL, [...pk(scope), c.requestHash, c.holder, c.lockedUntil, c.now, c.expiresAt])).length === 1,
  read: async (db, scope) => (await prepared<IdempotencyRow>(db, 'idempotency.read', READ_SQL, pk(scope)))[0],
  removeLapsed: async (db, scope, now) => (await prepared(db, 'idempotency.remove-lapsed', REMOVE_LAPSED_SQL, [...pk(scope), now, now])).length > 0,
  renew: async (db, scope, holder, lockedUntil) =>
    (await db('idempotency_keys').where(whereOf(scope)).andWhere({ holder, state: 'in_flight' }).update({ locked_until: lockedUntil })) > 0,
  complete: async (db, scope, holder, status, body) =>
    (await db('idempotency_keys')
      .where(whereOf(scope))
      .andWhere({ holder, state: 'in_flight' })
      .update({ state: 'done', holder: null, locked_until: null, response_status: status, response_body: body })) > 0,
  release: async (db, scope, holder) => (await db('idempotency_keys').where(whereOf(scope)).andWhere({ holder, state: 'in_flight' }).delete()) > 0,
  removeExpired: async (db, now, limit) => (await prepared(db, 'idempotency.remove-expired', REMOVE_EXPIRED_SQL, [now, limit])).length,
};

const whereOf = (s: KeyScope) => ({ workspace_id: s.workspaceId, principal: s.principal, operation: s.operation, key: s.key });
