import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Db, Runner } from '../../infra/db/database.js';
import type { ModelRow } from '../models/store.js';
import { JSON_UUIDS, prepared } from '../../infra/db/prepared.js';
import { invocationColumns, sessionsStore, type InvocationRow, type InvocationStatus, type NewInvocation, type QueuedInvocation } from './store.js';

// The one writer of invocation state. Every change of an invocation's status,
// lease or publication goes through this module, each one transition of
// TRANSITIONS in one statement: the API appends, the relay publishes, the
// sweeper recovers, the executor claims and finishes, and none of them writes
// the table any other way.

/**
 * A claim of an invocation. `attempts` is the lease's number: each claim takes
 * the next one, and every later write of the run names it, so a worker whose
 * lease ran out and was taken over can no longer change the row.
 */
export type Lease = Pick<InvocationRow, 'id' | 'attempts'>;

/** Why queued work of a deleted model ends in ERROR. */
export const DELETED_BEFORE_RUN = 'The model was deleted before this invocation ran.';

/**
 * The lifecycle of an invocation: every write of the table, with the statuses
 * it starts from and the status it leaves. Each write below takes its status
 * condition from here (`from`) and writes its `to`, so this table is the one
 * definition; state.test.ts walks it against the database. A `from` of none
 * makes a new row.
 */
export const TRANSITIONS = {
  /** Queued by the API, in an OPEN session of the caller. */
  append: { from: [], to: 'QUEUED' },
  /** Feedback (DATA_SUBMISSION): done as it is written, nothing runs it. */
  record: { from: [], to: 'COMPLETED' },
  /** The next explainer's invocation, queued in the transaction that completes the one it explains. */
  explain: { from: [], to: 'QUEUED' },
  /** Taken by an executor under a new lease, when no live lease holds the row (an IN_PROGRESS row's ran out). */
  claim: { from: ['QUEUED', 'IN_PROGRESS'], to: 'IN_PROGRESS' },
  /** The run's lease extended, under that lease. */
  heartbeat: { from: ['IN_PROGRESS'], to: 'IN_PROGRESS' },
  /** The model answered, under the run's lease (and, with an explainer, `explain` in the same transaction). */
  complete: { from: ['IN_PROGRESS'], to: 'COMPLETED' },
  /** The model failed for good, under the run's lease. */
  fail: { from: ['IN_PROGRESS'], to: 'ERROR' },
  /** A transient failure, under the run's lease: back to the queue for the broker's next delivery. */
  release: { from: ['IN_PROGRESS'], to: 'QUEUED' },
  /** The worker stopped renewing its lease (it died) and the lease ran out: back to the queue, to be published again. */
  expire: { from: ['IN_PROGRESS'], to: 'QUEUED' },
  /** Its model was deleted before it ran: it never will. */
  cancel: { from: ['QUEUED'], to: 'ERROR' },
  /** Marked published once the broker has it. */
  publish: { from: ['QUEUED'], to: 'QUEUED' },
  /** Its publication forgotten (the broker, or an in-process queue that died, lost it), so the relay publishes it again. */
  unpublish: { from: ['QUEUED'], to: 'QUEUED' },
} as const satisfies Record<string, { from: readonly InvocationStatus[]; to: InvocationStatus }>;

export type Transition = keyof typeof TRANSITIONS;

/**
 * The rows `transition` may move, as SQL: `status in (…)` of its `from`
 * statuses as literals, so a prepared statement's text stays one constant and
 * the planner matches the partial indexes (`where status = '…'`).
 */
export function fromStatuses(transition: Transition, alias?: string): string {
  const statuses: readonly InvocationStatus[] = TRANSITIONS[transition].from;
  if (!statuses.length) throw new Error(`${transition} makes a new row: it starts from no status`);
  return `${alias ? `${alias}.` : ''}status in (${statuses.map((status) => `'${status}'`).join(', ')})`;
}

/** The rows of `invocations` that `transition` may move. */
const movable = (db: Runner, transition: Transition) => db('invocations').whereRaw(fromStatuses(transition));

/** The columns of an append and their SQL types, as jsonb_to_recordset reads them (`ord`: the item's place in the batch). */
const APPEND_TYPES: Record<keyof QueuedInvocation, string> = {
  id: 'uuid',
  workspace_id: 'integer',
  session_id: 'uuid',
  user_id: 'integer',
  model_id: 'integer',
  type: 'text',
  request_type: 'text',
  body: 'text',
  model_key: 'text',
  related_to: 'uuid',
  with_explanation: 'boolean',
  output_storage_key: 'text',
};
const APPEND_COLUMNS = Object.keys(APPEND_TYPES) as Array<keyof QueuedInvocation>;
const APPEND_RECORD = ['ord integer', ...APPEND_COLUMNS.map((column) => `${column} ${APPEND_TYPES[column]}`)].join(', ');

/**
 * Appends many QUEUED invocations in one statement, each to its OPEN session
 * of its own user and model: each session's `next_order` moves once by the
 * number of its items, under its row lock, and the items take the orders in
 * batch order.
 */
const APPEND_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb) as t(${APPEND_RECORD})),
wanted as (select session_id, model_id, user_id, count(*)::integer as n from input group by session_id, model_id, user_id),
s as (
  update sessions set next_order = sessions.next_order + wanted.n
  from wanted
  where sessions.id = wanted.session_id and sessions.model_id = wanted.model_id and sessions.user_id = wanted.user_id and sessions.state = 'OPEN'
  returning sessions.id, sessions.model_id, sessions.user_id, sessions.next_order - wanted.n as first_order
)
insert into invocations (${APPEND_COLUMNS.map((column) => `"${column}"`).join(', ')}, status, "order")
select ${APPEND_COLUMNS.map((column) => `i."${column}"`).join(', ')}, ?::text, s.first_order + row_number() over (partition by i.session_id order by i.ord) - 1
from input i join s on s.id = i.session_id and s.model_id = i.model_id and s.user_id = i.user_id
returning ${invocationColumns('invocations')}`;

/**
 * Claims and completions of many runs in one statement, the one place either
 * is written. Lists go in as JSON: `i.id = any(array(…))` keeps the generic
 * plan on the primary key, where a join with a list the planner cannot size
 * could scan the table. Bindings: completions, claims, the claim's status,
 * the lease in milliseconds, the completion's status.
 */
export const RUN_WRITES_SQL = `
with completions as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, attempts integer, response text)),
claims as (select jsonb_array_elements_text(?::jsonb)::uuid as id),
claimed as (
  update invocations as i
     set status = ?, started_at = now(), lease_expires_at = now() + ? * interval '1 millisecond', attempts = i.attempts + 1
   where i.id = any(array(select id from claims))
     and ${fromStatuses('claim', 'i')} and (i.lease_expires_at is null or i.lease_expires_at < now())
  returning ${invocationColumns('i')}
), completed as (
  update invocations as i
     set status = ?, response = v.response, error = null, lease_expires_at = null, completed_at = now()
    from completions as v
   where i.id = any(array(select id from completions)) and i.id = v.id and i.attempts = v.attempts and ${fromStatuses('complete', 'i')}
  returning i.id
)
select claimed.*, null::uuid as completed_id from claimed
union all
select ${invocationColumns('(null::invocations)')}, completed.id from completed`;

/** Marks published the rows still QUEUED, skipping those an executor holds locked: a mark must never stall the run path. */
const MARK_PUBLISHED_SQL = `
update invocations set published_at = now()
 where id in (select id from invocations where id = any(${JSON_UUIDS}) and ${fromStatuses('publish')} and published_at is null for update skip locked)`;

/** The rows `transition` may move that the run under `lease` still holds: it was not taken over since. */
const held = (db: Runner, transition: Transition, lease: Lease) => movable(db, transition).where({ id: lease.id, attempts: lease.attempts });

export type RunWrite = { claim: string } | { complete: { lease: Lease; response: string } };

/** A claimed run: its lease and what an explanation of it copies. */
export type Run = Lease & Pick<InvocationRow, 'workspace_id' | 'session_id' | 'user_id' | 'request_type' | 'body'>;

/** `claim` and `complete` of many runs in one statement (RUN_WRITES_SQL): the claimed rows, and the ids of the completions accepted. */
async function runWrites(db: Runner, claims: string[], completions: Array<{ lease: Lease; response: string }>, leaseMs: number) {
  const rows = await prepared<InvocationRow & { completed_id: string | null }>(db, 'invocations.run-writes', RUN_WRITES_SQL, [
    JSON.stringify(completions.map(({ lease, response }) => ({ id: lease.id, attempts: lease.attempts, response }))),
    JSON.stringify([...new Set(claims)]),
    TRANSITIONS.claim.to,
    leaseMs,
    TRANSITIONS.complete.to,
  ]);
  const claimed = new Map<string, InvocationRow>();
  const completed = new Set<string>();
  for (const { completed_id: completedId, ...row } of rows) {
    if (completedId) completed.add(completedId);
    else claimed.set(row.id, row as InvocationRow);
  }
  return { claimed, completed };
}

/** `explain`: the explainer's invocation of a run, next in its session (the caller holds the session's row lock). */
async function appendExplanation(trx: Runner, run: Run, explainer: ModelRow): Promise<InvocationRow> {
  const explanation: NewInvocation & { order: number } = {
    id: crypto.randomUUID(),
    order: await sessionsStore.takeOrder(trx, run.session_id),
    workspace_id: run.workspace_id,
    session_id: run.session_id,
    user_id: run.user_id,
    model_id: explainer.id,
    type: 'EXPLAIN',
    request_type: run.request_type,
    body: run.body,
    status: TRANSITIONS.explain.to,
    model_key: `${explainer.model_code}:${explainer.version}`,
    related_to: run.id,
    with_explanation: true, // the chain goes on, explainer by explainer
    output_storage_key: null,
  };
  return (await trx<InvocationRow>('invocations').insert(explanation as never).returning('*'))[0] as InvocationRow;
}

/** Each function names the transition it writes (TRANSITIONS); none writes another. */
export const invocationState = {
  /**
   * `append`, in one statement: QUEUED invocations, each to its OPEN session
   * of its own user and model. One output per row, in order: the row, or
   * undefined when its session refused it (not the caller's, or not OPEN).
   */
  async appendQueued(db: Runner, rows: QueuedInvocation[]): Promise<Array<InvocationRow | undefined>> {
    const input = rows.map((row, ord) => ({ ord, ...row }));
    const inserted = await prepared<InvocationRow>(db, 'invocations.append', APPEND_SQL, [JSON.stringify(input), TRANSITIONS.append.to]);
    const byId = new Map(inserted.map((row) => [row.id, row]));
    return rows.map((row) => byId.get(row.id));
  },

  /** `record`: feedback, COMPLETED as it is written. The caller holds the session's row lock and its order. */
  appendCompleted: async (trx: Runner, row: Omit<NewInvocation, 'status' | 'response' | 'completed_at'> & { order: number }) =>
    (await trx<InvocationRow>('invocations').insert({ ...row, status: TRANSITIONS.record.to, response: '', completed_at: new Date() } as never).returning('*'))[0] as InvocationRow,

  /**
   * The executor's `claim`s and `complete`s of many runs, in one statement.
   * Claims: QUEUED (or IN_PROGRESS under a lease that ran out) → IN_PROGRESS
   * under the next lease. Completions: IN_PROGRESS under the named lease →
   * COMPLETED. Gives the claimed rows and the ids of the completions accepted.
   */
  runWrites: (db: Db, claims: string[], completions: Array<{ lease: Lease; response: string }>, leaseMs: number) => runWrites(db, claims, completions, leaseMs),

  /** `heartbeat`: extends a lease still held; false when it was lost (taken over, or the run finished elsewhere). */
  heartbeat: async (db: Db, lease: Lease, leaseMs: number) =>
    (await held(db, 'heartbeat', lease).update({ lease_expires_at: db.raw(`now() + ? * interval '1 millisecond'`, [leaseMs]) })) > 0,

  /**
   * `complete` under the run's lease, through the same statement as every
   * completion, and `explain` in the same transaction. Undefined when the
   * lease was lost.
   */
  completeAndExplain: (db: Db, run: Run, response: string, explainer: ModelRow): Promise<InvocationRow | undefined> =>
    db.transaction(async (trx) => {
      const { completed } = await runWrites(trx, [], [{ lease: run, response }], 0);
      return completed.has(run.id) ? appendExplanation(trx, run, explainer) : undefined;
    }),

  /** `fail` under the named lease; false when the lease was lost. */
  fail: async (db: Db, lease: Lease, reason: string) =>
    (await held(db, 'fail', lease).update({ status: TRANSITIONS.fail.to, error: reason.slice(0, 2000), response: '', completed_at: db.fn.now(), lease_expires_at: null })) > 0,

  /**
   * `release` under the named lease, for the broker's redelivery of the same
   * message (marked published, so the relay sends no second copy).
   */
  release: async (db: Db, lease: Lease, reason: string) =>
    (await held(db, 'release', lease).update({ status: TRANSITIONS.release.to, error: reason.slice(0, 2000), published_at: db.fn.now(), lease_expires_at: null })) > 0,

  /** `cancel`: QUEUED invocations of deleted models → ERROR with `reason`: they will not run. */
  cancelQueuedOf: (db: Runner, modelIds: number[], reason: string) =>
    movable(db, 'cancel').whereIn('model_id', modelIds).update({ status: TRANSITIONS.cancel.to, error: reason, response: '', completed_at: db.fn.now() }),

  /** `expire`: IN_PROGRESS under leases that ran out (their workers died) → QUEUED and unpublished, for the relay to send again. */
  expireLeases: (db: Runner) => scans.expiredLeases(db).update({ status: TRANSITIONS.expire.to, published_at: null, lease_expires_at: null }),

  /** `publish`: marks dispatched rows published once the broker confirmed them. */
  markPublished: async (db: Db, ids: string[]) => {
    await prepared(db, 'invocations.mark-published', MARK_PUBLISHED_SQL, [JSON.stringify(ids)]);
  },

  /** `publish`, in the caller's transaction, of up to `limit` unpublished rows older than `graceMs`, oldest first, skipping rows other relays hold. */
  takeUnpublished: async (trx: Knex.Transaction, graceMs: number, limit: number) => {
    const unpublished = scans.unpublished(trx, graceMs).limit(limit).forUpdate().skipLocked().select('id');
    const rows = (await trx('invocations').whereIn('id', unpublished).update({ published_at: trx.fn.now() }).returning('id')) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  },

  /** `unpublish` of every published QUEUED row: an in-process queue that held them is gone (a restart). */
  forgetPublications: (db: Db) => movable(db, 'unpublish').whereNotNull('published_at').update({ published_at: null }),

  /** `unpublish` of rows published before `cutoff` and still QUEUED: the broker lost them. */
  forgetStalePublications: (db: Runner, cutoff: Date) => scans.stalePublications(db, cutoff).update({ published_at: null }),
};

/**
 * What the relay and the sweeper look for on every pass, in every process
 * that runs them, each through a partial index (plans.test.ts checks the
 * plans): a pass costs the same with a hundred invocations or a hundred million.
 */
export const scans = {
  /** Committed QUEUED but never confirmed by the broker, oldest first. */
  unpublished: (db: Runner, graceMs: number) =>
    movable(db, 'publish')
      .whereNull('published_at')
      .whereRaw(`created_at < now() - ? * interval '1 millisecond'`, [graceMs])
      .orderBy('created_at'),
  /** Published long ago and still QUEUED. */
  stalePublications: (db: Runner, cutoff: Date) => movable(db, 'unpublish').where('published_at', '<', cutoff),
  /** IN_PROGRESS under a lease that ran out. */
  expiredLeases: (db: Runner) => movable(db, 'expire').where('lease_expires_at', '<', db.fn.now()),
};
