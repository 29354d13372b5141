import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import { announceCommitted } from '../../infra/db/change-feed.js';
import type { WebhookEvent } from './endpoints.store.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

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

/** A delivery to queue: to an endpoint's URL, or (`url`) an invocation's callback it allows. */
export type NewDelivery = Pick<DeliveryRow, 'workspace_id' | 'endpoint_id' | 'url' | 'event_type' | 'payload'>;

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
  /** Queues these deliveries, pending from now; the deliverers hear of them after the commit. */
  insert(db: Runner, deliveries: NewDelivery[]): Promise<void>;
  /** One pending delivery of `payload` per enabled endpoint of the workspace that receives `event`; how many. */
  enqueueForWorkspace(db: Runner, workspaceId: number, event: WebhookEvent, payload: string): Promise<number>;
  /** A page of an endpoint's deliveries, newest first, read on webhook_deliveries_page within the endpoint's workspace. */
  pageOfEndpoint(db: Runner, endpoint: { workspaceId: number; endpointId: number }, page: Page, status?: DeliveryStatus): Promise<PageOfRows<DeliveryRow>>;
  ofEndpoint(db: Runner, endpointId: number, id: string): Promise<DeliveryRow | undefined>;
  /** The attempts of these deliveries, in order. */
  attemptsOf(db: Runner, ids: readonly string[]): Promise<AttemptRow[]>;
  /** Takes up to `limit` due deliveries under a lease of `leaseMs` (none another deliverer holds), in turns between workspaces, within `caps`. */
  claimDue(db: Runner, limit: number, leaseMs: number, caps: ClaimCaps): Promise<ClaimedDelivery[]>;
  /** Records an attempt and, when the claim still holds, its outcome; whether it did. */
  finish(db: Runner, claim: Pick<ClaimedDelivery, 'id' | 'attempts'>, outcome: AttemptOutcome): Promise<boolean>;
  /** Queues it again at once, same id; undefined when not found or an attempt is in flight. */
  redeliver(db: Runner, endpointId: number, id: string): Promise<DeliveryRow | undefined>;
  /** Deletes up to `limit` finished deliveries created before `cutoff`; how many. */
  removeFinishedBefore(db: Runner, cutoff: Date, limit: number): Promise<number>;
}

/** The caps of a claim, counted across processes: deliveries in flight at once of one workspace, and of one endpoint. */
export interface ClaimCaps {
  perWorkspace: number;
  perEndpoint: number;
}

/**
 * Takes due deliveries in turns between workspaces: a workspace's k-th next
 * delivery goes in the order of (its deliveries in flight + k), the fewest
 * first, then the oldest due; so a workspace whose slow receivers hold its
 * slots waits behind one that has none in flight. A workspace gets at most
 * `perWorkspace` in flight, an endpoint `perEndpoint`, counting the attempts
 * every process holds (the caller holds CLAIM_LOCK, so no other claim races
 * the counts). Only what can be chosen is read: the workspaces with pending
 * deliveries one index probe each (`heads`, webhook_deliveries_fair), then,
 * of those under their cap, each endpoint's first due deliveries up to what
 * it may still take (webhook_deliveries_endpoint_due): never a backlog, and a
 * capped endpoint's never hides the others'. A claim moves the next attempt a
 * lease ahead and takes the next attempt number, under which its result is
 * written.
 * Bindings: limit, perWorkspace (twice), perEndpoint (twice), perWorkspace,
 * limit, the lease in milliseconds (twice).
 */
const CLAIM_SQL = `
with recursive heads as (
  (select d.workspace_id, d.next_attempt_at from webhook_deliveries d where d.status = 'pending' order by d.workspace_id, d.next_attempt_at limit 1)
  union all
  select n.* from heads h cross join lateral (
    select d.workspace_id, d.next_attempt_at from webhook_deliveries d
     where d.status = 'pending' and d.workspace_id > h.workspace_id order by d.workspace_id, d.next_attempt_at limit 1
  ) n
),
leased as (
  select d.workspace_id, d.endpoint_id from webhook_deliveries d
   where d.lease_expires_at is not null and d.lease_expires_at > now() and d.status = 'pending'
),
workspace_busy as (select workspace_id, count(*)::integer as n from leased group by workspace_id),
endpoint_busy as (select endpoint_id, count(*)::integer as n from leased group by endpoint_id),
open_endpoints as (
  select h.workspace_id, ep.id as endpoint_id, coalesce(wb.n, 0) as running,
         least(?::integer, ?::integer - coalesce(wb.n, 0), ?::integer - coalesce(eb.n, 0)) as allowance
    from heads h
    join webhook_endpoints ep on ep.workspace_id = h.workspace_id
    left join workspace_busy wb on wb.workspace_id = h.workspace_id
    left join endpoint_busy eb on eb.endpoint_id = ep.id
   where h.next_attempt_at <= now() and coalesce(wb.n, 0) < ?::integer and coalesce(eb.n, 0) < ?::integer
),
candidates as (
  select c.id, c.next_attempt_at, o.workspace_id, o.running
    from open_endpoints o cross join lateral (
      select d.id, d.next_attempt_at from webhook_deliveries d
       where d.status = 'pending' and d.endpoint_id = o.endpoint_id and d.workspace_id = o.workspace_id and d.next_attempt_at <= now()
       order by d.next_attempt_at limit o.allowance
    ) c
),
ranked as (
  select c.*, c.running + row_number() over (partition by c.workspace_id order by c.next_attempt_at) as load from candidates c
),
picked as (
  select r.id from ranked r where r.load <= ?::integer order by r.load, r.next_attempt_at limit ?::integer
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

/** Serializes claims across processes: a claim counts the deliveries in flight, and a cap must not be raced past. */
const CLAIM_LOCK = 0x64697768;

const ENQUEUE_SQL = `
insert into webhook_deliveries (workspace_id, endpoint_id, event_type, payload)
select workspace_id, id, ?::text, ?::text from webhook_endpoints
 where workspace_id = ? and enabled and events @> jsonb_build_array(?::text)`;

/** Wakes the deliverers of every process once the deliveries queued through `db` are committed. */
const announceQueued = (db: Runner) => announceCommitted(db, 'webhook_deliveries');

export const webhookDeliveriesStore: WebhookDeliveriesStore = {
  async insert(db, deliveries) {
    if (!deliveries.length) return;
    await db('webhook_deliveries').insert(deliveries);
    announceQueued(db);
  },
  async enqueueForWorkspace(db, workspaceId, event, payload) {
    const result = (await db.raw(ENQUEUE_SQL, [event, payload, workspaceId, event])) as { rowCount: number | null; affectedRows?: number };
    const queued = result.rowCount ?? result.affectedRows ?? 0;
    if (queued) announceQueued(db);
    return queued;
  },
  pageOfEndpoint: (db, { workspaceId, endpointId }, page, status) => {
    const query = db<DeliveryRow>('webhook_deliveries').where({ endpoint_id: endpointId, workspace_id: workspaceId });
    if (status) query.where({ status });
    return keysetPage<DeliveryRow>(query, page, { table: 'webhook_deliveries', idType: 'uuid' });
  },
  ofEndpoint: (db, endpointId, id) => db<DeliveryRow>('webhook_deliveries').where({ endpoint_id: endpointId, id }).first(),
  attemptsOf: async (db, ids) => (ids.length ? db<AttemptRow>('webhook_attempts').whereIn('delivery_id', ids).orderBy(['delivery_id', 'attempt']) : []),
  claimDue: (db, limit, leaseMs, { perWorkspace, perEndpoint }) =>
    db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?)', [CLAIM_LOCK]);
      const bindings = [limit, perWorkspace, perEndpoint, perWorkspace, perEndpoint, perWorkspace, limit, leaseMs, leaseMs];
      return ((await trx.raw(CLAIM_SQL, bindings)) as { rows: ClaimedDelivery[] }).rows;
    }),
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
    if (row) announceQueued(db);
    return row as DeliveryRow | undefined;
  },
  async removeFinishedBefore(db, cutoff, limit) {
    const old = db('webhook_deliveries').whereIn('status', ['delivered', 'failed']).where('created_at', '<', cutoff).orderBy('created_at').limit(limit).select('id');
    // The ids, not knex's count: on PGlite a delete answers its result object.
    return (await db('webhook_deliveries').whereIn('id', old).delete(['id'])).length;
  },
};
