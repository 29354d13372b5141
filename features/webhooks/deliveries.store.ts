import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import { CHANGES_CHANNEL } from '../../infra/db/migrations/0005_change_notifications.js';
import type { WebhookEvent } from './endpoints.store.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRow {
  /** Sent as `webhook-id`, the same for every attempt and redelivery. */
  id: string;
  workspace_id: number;
  endpoint_id: number;
  /** An invocation's callback URL; null: the endpoint's own. */
  url: string | null;
  event_type: WebhookEvent;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  queued_at_attempt: number;
  next_attempt_at: Date;
  lease_expires_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response: string | null;
}

/** A delivery taken by a deliverer: what to send, where, signed with which (sealed) secret. */
export interface ClaimedDelivery {
  id: string;
  /** The claim's number: its result is written under it. */
  attempts: number;
  /** The attempt's place in its round, 1 for the first: where the backoff schedule stands. */
  round_attempt: number;
  payload: string;
  target_url: string;
  secret_sealed: string;
  endpoint_enabled: boolean;
  /** When it was queued: with the state change that made it. */
  created_at: Date;
}

/** How an attempt ended, as recorded; `next_attempt_at` is set while the delivery stays pending. */
export interface AttemptOutcome {
  attempt: Omit<AttemptRow, 'delivery_id' | 'attempt'>;
  status: DeliveryStatus;
  nextAttemptAt?: Date;
}

/** Every query of `webhook_deliveries` and `webhook_attempts`. */
export interface WebhookDeliveriesStore {
  /** One pending delivery of `payload` per enabled endpoint of the workspace that receives `event`; how many. */
  enqueueForWorkspace(db: Runner, workspaceId: number, event: WebhookEvent, payload: string): Promise<number>;
  pageOfEndpoint(db: Runner, endpointId: number, page: Page, status?: DeliveryStatus): Promise<PageOfRows<DeliveryRow>>;
  ofEndpoint(db: Runner, endpointId: number, id: string): Promise<DeliveryRow | undefined>;
  /** The attempts of these deliveries, in order. */
  attemptsOf(db: Runner, ids: readonly string[]): Promise<AttemptRow[]>;
  /** Takes up to `limit` due deliveries under a lease of `leaseMs` (none another deliverer holds), at most `perEndpoint` of an endpoint in flight. */
  claimDue(db: Runner, limit: number, leaseMs: number, perEndpoint: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt and, when the claim still holds, its outcome; whether it did. */
  finish(db: Runner, claim: Pick<ClaimedDelivery, 'id' | 'attempts'>, outcome: AttemptOutcome): Promise<boolean>;
  /** Queues it again at once, same id; undefined when not found or an attempt is in flight. */
  redeliver(db: Runner, endpointId: number, id: string): Promise<DeliveryRow | undefined>;
  /** Deletes up to `limit` finished deliveries created before `cutoff`; how many. */
  removeFinishedBefore(db: Runner, cutoff: Date, limit: number): Promise<number>;
}

/**
 * Takes due deliveries, oldest due first, at most `perEndpoint` of an
 * endpoint in flight (counting those other passes hold), so one slow or
 * dead receiver with a backlog cannot take every slot from the others. A
 * claim moves the next attempt a lease ahead and takes the next attempt
 * number, under which its result is written.
 */
const CLAIM_SQL = `
with busy as (
  select endpoint_id, count(*)::integer as n from webhook_deliveries
   where lease_expires_at is not null and lease_expires_at > now() and status = 'pending' group by endpoint_id
),
candidates as (
  select d.id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
   where d.status = 'pending' and d.next_attempt_at <= now()
     and not exists (select 1 from busy b where b.endpoint_id = d.endpoint_id and b.n >= ?)
   order by d.next_attempt_at limit ?
),
picked as (
  select r.id from (select c.*, row_number() over (partition by c.endpoint_id order by c.next_attempt_at) as nth from candidates c) r
    left join busy b on b.endpoint_id = r.endpoint_id
   where r.nth + coalesce(b.n, 0) <= ?
   order by r.next_attempt_at limit ?
),
due as (
  select d.id from webhook_deliveries d
   where d.id in (select id from picked) and d.status = 'pending' and d.next_attempt_at <= now()
   for update skip locked
)
update webhook_deliveries d
   set attempts = d.attempts + 1, next_attempt_at = now() + ? * interval '1 millisecond', lease_expires_at = now() + ? * interval '1 millisecond'
  from due, webhook_endpoints ep
 where d.id = due.id and ep.id = d.endpoint_id
returning d.id, d.attempts, d.attempts - d.queued_at_attempt as round_attempt, d.created_at, d.payload, coalesce(d.url, ep.url) as target_url, ep.secret_sealed, ep.enabled as endpoint_enabled`;

/** Due rows a pass looks at, per delivery it may take: enough to find other endpoints' behind a capped one's. */
const CANDIDATES_PER_SLOT = 4;

const ENQUEUE_SQL = `
insert into webhook_deliveries (workspace_id, endpoint_id, event_type, payload)
select workspace_id, id, ?::text, ?::text from webhook_endpoints
 where workspace_id = ? and enabled and events @> jsonb_build_array(?::text)`;

const notifyQueued = (db: Runner) => db.raw(`select pg_notify(?, 'webhook_deliveries')`, [CHANGES_CHANNEL]);

export const webhookDeliveriesStore: WebhookDeliveriesStore = {
  async enqueueForWorkspace(db, workspaceId, event, payload) {
    const result = (await db.raw(ENQUEUE_SQL, [event, payload, workspaceId, event])) as { rowCount: number | null; affectedRows?: number };
    return result.rowCount ?? result.affectedRows ?? 0;
  },
  pageOfEndpoint: (db, endpointId, page, status) => {
    const query = db<DeliveryRow>('webhook_deliveries').where({ endpoint_id: endpointId });
    if (status) query.where({ status });
    return keysetPage<DeliveryRow>(query, page, { table: 'webhook_deliveries', idType: 'uuid' });
  },
  ofEndpoint: (db, endpointId, id) => db<DeliveryRow>('webhook_deliveries').where({ endpoint_id: endpointId, id }).first(),
  attemptsOf: async (db, ids) => (ids.length ? db<AttemptRow>('webhook_attempts').whereIn('delivery_id', ids).orderBy(['delivery_id', 'attempt']) : []),
  async claimDue(db, limit, leaseMs, perEndpoint) {
    const result = (await db.raw(CLAIM_SQL, [perEndpoint, limit * CANDIDATES_PER_SLOT, perEndpoint, limit, leaseMs, leaseMs])) as { rows: ClaimedDelivery[] };
    return result.rows;
  },
  finish: (db, claim, outcome) =>
    db.transaction(async (trx) => {
      await trx('webhook_attempts').insert({ delivery_id: claim.id, attempt: claim.attempts, ...outcome.attempt }).onConflict(['delivery_id', 'attempt']).ignore();
      const moved = await trx('webhook_deliveries')
        .where({ id: claim.id, attempts: claim.attempts, status: 'pending' })
        .update(
          {
          status: outcome.status,
          next_attempt_at: outcome.nextAttemptAt ?? trx.fn.now(),
          lease_expires_at: null,
          last_status_code: outcome.attempt.status_code,
          last_error: outcome.attempt.error,
          ...(outcome.status === 'delivered' && { delivered_at: trx.fn.now() }),
          },
          ['id'],
        );
      return moved.length > 0;
    }),
  async redeliver(db, endpointId, id) {
    const [row] = await db<DeliveryRow>('webhook_deliveries')
      .where({ endpoint_id: endpointId, id })
      .where((inFlight) => inFlight.whereNull('lease_expires_at').orWhere('lease_expires_at', '<=', db.fn.now()))
      .update({ status: 'pending', next_attempt_at: db.fn.now(), lease_expires_at: null, queued_at_attempt: db.raw('attempts') } as never)
      .returning('*');
    if (row) await notifyQueued(db);
    return row as DeliveryRow | undefined;
  },
  async removeFinishedBefore(db, cutoff, limit) {
    const old = db('webhook_deliveries').whereIn('status', ['delivered', 'failed']).where('created_at', '<', cutoff).orderBy('created_at').limit(limit).select('id');
    // The ids, not knex's count: on PGlite a delete answers its result object.
    return (await db('webhook_deliveries').whereIn('id', old).delete(['id'])).length;
  },
};
