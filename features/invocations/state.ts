import crypto from 'node:crypto';
import type { Db, Runner } from '../../infra/db/database.js';
import type { ModelRow } from '../models/store.js';
import { prepared } from '../../infra/db/prepared.js';
import { announceCommitted } from '../../infra/db/change-feed.js';
import { QuotaExceededError } from '../../kernel/errors/errors.js';
import { queueOutcomeDeliveries } from '../webhooks/outcomes.js';
import { currentTraceparent } from '../../infra/telemetry/spans.js';
import { takeClaimLocks, waitForClaimLock } from './claim-locks.js';
import { WORKSPACE_ORDER, fairChoice } from './fair-order.js';
import { invocationColumns, sessionsStore, type AttemptOutcome, type SessionRow, type InvocationRow, type InvocationStatus, type NewInvocation, type QueuedInvocation } from './store.js';

// The one writer of invocation state. Every change of an invocation's status,
// or lease goes through this module, each one transition of
// TRANSITIONS in one statement: the API appends, the sweeper recovers, the executor claims and finishes, and none of them writes
// the table any other way.
//
// Attempts (invocation_attempts) are written here too: an attempt's row is
// made by the claim that starts it, in the claim's statement, and closed by
// the transition that ends its run (complete, fail, release, cancel, expire)
// in that transition's statement or transaction, so the executor that ran it
// is known even when it dies or the run is cancelled, and a run costs no
// extra round trip.
//
// The final transitions (complete, fail, abandon, cancel) queue the webhook
// deliveries of what they finished in their own transaction
// (queueOutcomeDeliveries), so a delivery commits or rolls back with its
// outcome.

/**
 * A claim of an invocation. `attempts` is the lease's number: each claim takes
 * the next one, and every later write of the run names it, so a worker whose
 * lease ran out and was taken over can no longer change the row.
 */
export type Lease = Pick<InvocationRow, 'id' | 'attempts'>;

/** The priority of an invocation that asks for none; 0 is the lowest, 9 the highest. */
export const DEFAULT_PRIORITY = 5;

/** How long a client is asked to wait before it appends again to a full workspace queue. */
const QUEUE_FULL_RETRY_SECONDS = 5;

/** An appended row, and the snapshot its append was written in (`pg_snapshot` text): the start of its session's events that it has yet to see. */
export type AppendedInvocation = InvocationRow & { appended_in: string; shadowed: boolean };

/** An append would pass a workspace's `max_queued`: nothing was written. */
export class QueueFullError extends QuotaExceededError {
  constructor(readonly maxQueued: number) {
    super(`The workspace has ${maxQueued} invocations queued, its limit (max_queued). Retry when some have run.`, QUEUE_FULL_RETRY_SECONDS);
  }
}

/** Why an attempt ended LOST: what its user reads. */
export const LEASE_RAN_OUT = 'Its executor stopped renewing its lease; the invocation was queued again.';

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
  /** Taken by an executor under a new lease: the next in fair order (CLAIM_SQL). */
  claim: { from: ['QUEUED'], to: 'IN_PROGRESS' },
  /** The run's lease extended, under that lease. */
  heartbeat: { from: ['IN_PROGRESS'], to: 'IN_PROGRESS' },
  /** The model answered, under the run's lease (and, with an explainer, `explain` in the same transaction). */
  complete: { from: ['IN_PROGRESS'], to: 'COMPLETED' },
  /** The model failed for good, under the run's lease. */
  fail: { from: ['IN_PROGRESS'], to: 'ERROR' },
  /** A transient failure, under the run's lease: back to the queue, claimable again after its backoff. */
  release: { from: ['IN_PROGRESS'], to: 'QUEUED' },
  /** The worker stopped renewing its lease (it died) and the lease ran out: back to the queue. */
  expire: { from: ['IN_PROGRESS'], to: 'QUEUED' },
  /** Its model was deleted before it ran: it never will. */
  abandon: { from: ['QUEUED'], to: 'ERROR' },
  /** A client cancelled it: a queued one never runs, a running one has its lease taken (its result is refused, its call aborted). */
  cancel: { from: ['QUEUED', 'IN_PROGRESS'], to: 'CANCELLED' },
  /** A client re-runs a failed or cancelled invocation: queued again as a new attempt, its earlier attempts kept. */
  requeue: { from: ['ERROR', 'CANCELLED'], to: 'QUEUED' },
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

/**
 * `fromStatuses` for a statement that names its rows by id: the statuses bound
 * to one parameter (`statusesOf`), not written in. Written in, they let the
 * planner prove a partial index's predicate, and a generic plan may then read
 * every row in those statuses (a whole backlog) to find the few it names.
 */
const boundStatuses = (alias: string) => `${alias}.status = any(array(select jsonb_array_elements_text(?::jsonb)))`;

/** The binding of `boundStatuses` for `transition`. */
const statusesOf = (transition: Transition) => JSON.stringify(TRANSITIONS[transition].from);

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
  priority: 'smallint',
  callback_endpoint_id: 'integer',
  callback_url: 'text',
  traceparent: 'text',
  shadow_of: 'uuid',
};
const APPEND_COLUMNS = Object.keys(APPEND_TYPES) as Array<keyof QueuedInvocation>;
const APPEND_RECORD = ['ord integer', ...APPEND_COLUMNS.map((column) => `${column} ${APPEND_TYPES[column]}`)].join(', ');

/**
 * Appends many QUEUED invocations in one statement, each to its OPEN session
 * of its own user and model: each session's `next_order` moves once by the
 * number of its items, under its row lock, and the items take the orders in
 * batch order. When a workspace's queued invocations would pass its
 * `max_queued`, nothing is written, and one row names the limit.
 *
 * A count is exact only under the workspace's queue lock (QUEUE_LOCK_SQL,
 * taken by an earlier statement of the transaction, so this one's snapshot
 * sees every append before it). Unlocked (`locked` false), a batch with a
 * limited workspace writes nothing and answers one row with `unlocked` true,
 * so appends to workspaces without a limit stay one statement.
 *
 * Each row comes with the snapshot of its append (`appended_in`): every
 * later status of it is written by a transaction that snapshot does not see,
 * so a follower of the session's events from there misses none of them.
 */
const APPEND_SQL = `
with input as (select * from jsonb_to_recordset(?::jsonb) as t(${APPEND_RECORD})),
settings as (select ?::boolean as locked),
limited as (select w.id, w.max_queued from workspaces w where w.id in (select workspace_id from input) and w.max_queued is not null),
full_workspaces as (
  select l.id, l.max_queued from limited l
    join (select workspace_id, count(*)::integer as n from input group by workspace_id) a on a.workspace_id = l.id
   where (select locked from settings)
     and a.n + (select count(*) from invocations q where ${fromStatuses('claim', 'q')} and q.workspace_id = l.id) > l.max_queued
),
unlocked as (select 1 from limited where not (select locked from settings) limit 1),
wanted as (
  select session_id, model_id, user_id, bool_and(shadow_of is null) as own, count(*)::integer as n from input
   where not exists (select 1 from full_workspaces) and not exists (select 1 from unlocked) group by session_id, model_id, user_id
),
s as (
  update sessions set next_order = sessions.next_order + wanted.n
  from wanted
  where sessions.id = wanted.session_id and sessions.model_id = wanted.model_id and sessions.user_id = wanted.user_id and sessions.state = 'OPEN'
    and (sessions.shadow_of is null) = wanted.own
  returning sessions.id, sessions.model_id, sessions.user_id, sessions.shadowed, sessions.next_order - wanted.n as first_order
),
appended as (
  insert into invocations (${APPEND_COLUMNS.map((column) => `"${column}"`).join(', ')}, status, "order")
  select ${APPEND_COLUMNS.map((column) => `i."${column}"`).join(', ')}, ?::text, s.first_order + row_number() over (partition by i.session_id order by i.ord) - 1
  from input i join s on s.id = i.session_id and s.model_id = i.model_id and s.user_id = i.user_id
  returning ${invocationColumns('invocations')}
)
select appended.*, null::integer as max_queued, false as unlocked, pg_current_snapshot()::text as appended_in, s.shadowed from appended join s on s.id = appended.session_id
union all
select ${invocationColumns('(null::invocations)')}, f.max_queued, false, null, false from full_workspaces f
union all
select ${invocationColumns('(null::invocations)')}, null::integer, true, null, false from unlocked`;

/**
 * The advisory-lock class of a workspace's queue (the two-key form: this
 * class and the workspace's id, a key space apart from the claim locks'): whoever
 * adds to a limited workspace's queue holds it until commit, so concurrent
 * appends on any replica count one after another and `max_queued` holds.
 */
const QUEUE_LOCK_CLASS = 0x71756575;

/**
 * Takes the queue locks of the workspaces of a JSON list of ids that have a
 * `max_queued`, in id order (so two batches cannot deadlock), and answers
 * those workspaces and their limits. Workspaces without a limit take no lock.
 */
const QUEUE_LOCK_SQL = `
select w.id, w.max_queued, pg_advisory_xact_lock(${QUEUE_LOCK_CLASS}, w.id)::text as locked
  from workspaces w
 where w.id = any(array(select jsonb_array_elements_text(?::jsonb)::integer)) and w.max_queued is not null
 order by w.id`;

/** The queue locks of `workspaceIds` that have a limit, in the caller's transaction: their limits. */
const lockQueues = (trx: Runner, workspaceIds: number[]) =>
  prepared<{ id: number; max_queued: number }>(trx, 'invocations.lock-queues', QUEUE_LOCK_SQL, [JSON.stringify([...new Set(workspaceIds)])]);

/** How many invocations of a workspace are queued: read after its queue lock, the count no concurrent append can change. */
const queuedIn = async (trx: Runner, workspaceId: number) =>
  Number(((await movable(trx, 'claim').where({ workspace_id: workspaceId }).count({ n: '*' })) as Array<{ n: string | number }>)[0]!.n);

/**
 * The fair claim: up to `limit` QUEUED invocations in the fair order
 * (fair-order.ts, which owns the order and the limits), each moved to
 * IN_PROGRESS under a new lease, its attempt recorded as started by the
 * claiming executor, and its workspace's last turn moved on, the turns of
 * workspaces another claim is moving on now left to it. Each claimed row comes with the weight
 * of its workspace the claim ordered it by. The last row says whether queued
 * work is left that this claim did not take, claimable now or not
 * (`waiting`), looked for workspace by workspace in the order of the fair
 * index: a scan of the table in its heap order would walk every finished
 * invocation first. The chosen rows are updated through the primary key
 * (`boundStatuses`).
 * Bindings: those of `fairChoice` (the held workspaces, the limit four
 * times), the claim's status, the lease in milliseconds, the statuses a claim
 * moves from, the executor.
 */
export const CLAIM_SQL = `
with recursive ${fairChoice((alias) => fromStatuses('claim', alias))},
claimed as (
  -- The statement's own time: the claim transaction may have begun, taking its claim locks, before the row was inserted.
  update invocations as i
     set status = ?, started_at = statement_timestamp(), lease_expires_at = now() + ? * interval '1 millisecond', attempts = i.attempts + 1, available_at = null
   where i.id = any(array(select id from chosen)) and ${boundStatuses('i')}
  returning ${invocationColumns('i')}
),
turns as (
  update workspace_turns as t set last_claimed_at = now()
   where t.workspace_id = any(array(
     select u.workspace_id from workspace_turns u where u.workspace_id = any(array(select workspace_id from claimed)) for update skip locked
   ))
),
first_turns as (
  insert into workspace_turns (workspace_id, last_claimed_at)
  select distinct c.workspace_id, now() from claimed c
   where not exists (select 1 from workspace_turns t where t.workspace_id = c.workspace_id)
   order by 1
  on conflict (workspace_id) do nothing
),
recorded as (
  insert into invocation_attempts (invocation_id, attempt, executor, started_at)
  select id, attempts, ?, started_at from claimed
  on conflict do nothing
)
select claimed.*, chosen.share_weight, null::boolean as waiting from claimed join chosen on chosen.id = claimed.id
union all
select ${invocationColumns('(null::invocations)')}, null::integer,
       exists (
         select 1 from heads w cross join lateral (
           select 1 from invocations q where ${fromStatuses('claim', 'q')} and q.workspace_id = w.workspace_id and q.id <> all(array(select id from claimed))
            order by ${WORKSPACE_ORDER('q')} limit 1
         ) left_over
       )`;

/** `result`, once the event streams of every process were told, after the commit, that invocations of these sessions moved through `db`. */
function announced<T>(db: Runner, sessionIds: Iterable<string>, result: T): T {
  announceCommitted(db, 'invocations', [...new Set(sessionIds)]);
  return result;
}

const sessionsOf = (rows: Array<Pick<InvocationRow, 'session_id'>>) => rows.map((row) => row.session_id);

/**
 * Completions of many runs in one statement, the one place `complete` is
 * written, their attempts closed in it. Lists go in as JSON: `i.id = any(array(…))`
 * and `boundStatuses` keep the generic plan on the primary key. Bindings:
 * completions, the completion's status, the statuses it moves from, the
 * attempts' outcome.
 */
export const COMPLETE_SQL = `
with completions as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, attempts integer, response text)),
done as (
  update invocations as i
     set status = ?, response = v.response, error = null, lease_expires_at = null, completed_at = now()
    from completions as v
   where i.id = any(array(select id from completions)) and i.id = v.id and i.attempts = v.attempts and ${boundStatuses('i')}
  returning i.id, i.attempts, i.session_id
),
ended as (
  update invocation_attempts as a set ended_at = now(), outcome = ?
    from done where a.invocation_id = done.id and a.attempt = done.attempts and a.ended_at is null
)
select id, session_id from done`;

/** Outcome of the attempts a completion ends. */
const COMPLETED: AttemptOutcome = 'COMPLETED';

/** Closes the open attempts of runs a transition just ended, in the transition's transaction. */
async function endAttempts(trx: Runner, runs: Lease[], outcome: AttemptOutcome, error: string | null = null): Promise<void> {
  if (!runs.length) return;
  await trx('invocation_attempts')
    .whereIn(['invocation_id', 'attempt'], runs.map((run) => [run.id, run.attempts]))
    .whereNull('ended_at')
    .update({ ended_at: trx.fn.now(), outcome, error: error?.slice(0, MAX_ERROR) ?? null });
}

/** The longest error text kept, on an invocation or an attempt. */
const MAX_ERROR = 2000;

/**
 * A transition of one held run, with its attempt closed in the same
 * transaction, and its webhook deliveries queued there when it is `final`;
 * false when the lease was lost.
 */
const endRun = async (db: Db, lease: Lease, move: (trx: Runner) => PromiseLike<Array<Pick<InvocationRow, 'session_id'>>>, outcome: AttemptOutcome, error: string, final: boolean) => {
  const moved = await db.transaction(async (trx) => {
    const moved = await move(trx);
    if (moved.length) await endAttempts(trx, [lease], outcome, error);
    if (moved.length && final) await queueOutcomeDeliveries(trx, [lease.id]);
    return moved;
  });
  return announced(db, sessionsOf(moved), moved.length > 0);
};

/** The rows `transition` may move that the run under `lease` still holds: it was not taken over since. */
const held = (db: Runner, transition: Transition, lease: Lease) => movable(db, transition).where({ id: lease.id, attempts: lease.attempts });

/** A claimed run: its lease and what an explanation of it copies. */
export type Run = Lease & Pick<InvocationRow, 'workspace_id' | 'session_id' | 'user_id' | 'request_type' | 'body' | 'priority' | 'traceparent'>;

/** A claimed row, with the weight its workspace had at the claim: runs claimed ahead wait for a model call in the same shares (executor/slots.ts). */
export type ClaimedRow = InvocationRow & { share_weight: number };

/** What a claim found: the rows it took, and whether queued work is left that it could not take (quotas, backoff, or other claims). */
export interface Claimed {
  rows: ClaimedRow[];
  waiting: boolean;
}

/** The rows of CLAIM_SQL in `trx`, holding the claim locks of `held`. */
const claimHeld = (trx: Runner, held: number[], limit: number, leaseMs: number, executor: string) =>
  prepared<ClaimRow>(trx, 'invocations.claim', CLAIM_SQL, [JSON.stringify(held), limit, limit, limit, limit, TRANSITIONS.claim.to, leaseMs, statusesOf('claim'), executor]);

/** A row of CLAIM_SQL: a claimed row, or the last one, which says only whether work is `waiting`. */
type ClaimRow = ClaimedRow & { waiting: boolean | null };

/**
 * `claim` in `trx`: the claim locks it can take without waiting
 * (claim-locks.ts), then CLAIM_SQL. When it took nothing because other claims
 * held every limited workspace in line, `contended` names the first of them.
 */
async function claimIn(trx: Runner, limit: number, leaseMs: number, executor: string): Promise<{ rows: ClaimRow[]; contended: number | null }> {
  const locks = await takeClaimLocks(trx, limit);
  const rows = await claimHeld(trx, locks.held, limit, leaseMs, executor);
  return { rows, contended: !locks.held.length && rows.every((row) => row.waiting !== null) ? locks.first : null };
}

/**
 * `claim` of up to `limit` invocations in fair order (CLAIM_SQL), each attempt
 * recorded as `executor`'s. Claims run side by side, each holding the claim
 * locks of the limited workspaces it counts and no other. One that got
 * nothing because other claims held every limited workspace in line waits,
 * holding nothing else, for the first one's lock and claims again: claims of
 * one limited workspace take turns rather than poll.
 */
async function claimNext(db: Db, limit: number, leaseMs: number, executor: string): Promise<Claimed> {
  const first = await db.transaction((trx) => claimIn(trx, limit, leaseMs, executor));
  const { contended } = first;
  const rows =
    contended === null
      ? first.rows
      : await db.transaction(async (trx) => {
          await waitForClaimLock(trx, contended);
          return claimHeld(trx, [contended], limit, leaseMs, executor);
        });
  const claimed = rows.filter((row) => row.waiting === null).map(({ waiting: _, ...row }) => row as ClaimedRow);
  return announced(db, sessionsOf(claimed), { rows: claimed, waiting: claimed.length < limit && rows.some((row) => row.waiting === true) });
}

/** `complete` of many runs in one statement (COMPLETE_SQL), their deliveries queued in the caller's transaction `trx`: the ids of the completions accepted. */
async function completeAll(trx: Runner, completions: Array<{ lease: Lease; response: string }>): Promise<Set<string>> {
  const rows = await prepared<{ id: string; session_id: string }>(trx, 'invocations.complete', COMPLETE_SQL, [
    JSON.stringify(completions.map(({ lease, response }) => ({ id: lease.id, attempts: lease.attempts, response }))),
    TRANSITIONS.complete.to,
    statusesOf('complete'),
    COMPLETED,
  ]);
  await queueOutcomeDeliveries(trx, rows.map((row) => row.id));
  return announced(trx, sessionsOf(rows), new Set(rows.map((row) => row.id)));
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
    priority: run.priority,
    // The run's own span when it is traced: the explanation's run is its child, in the same trace.
    traceparent: currentTraceparent() ?? run.traceparent,
  };
  return (await trx<InvocationRow>('invocations').insert(explanation as never).returning('*'))[0] as InvocationRow;
}

/** Each function names the transition it writes (TRANSITIONS); none writes another. */
export const invocationState = {
  /**
   * `append`, in one statement: QUEUED invocations, each to its OPEN session
   * of its own user and model. One output per row, in order: the row;
   * or undefined when its session refused it (not the caller's, or not OPEN).
   * Throws QueueFullError, and writes nothing, when a workspace's queued
   * invocations would pass its `max_queued`.
   */
  async appendQueued(db: Runner, rows: QueuedInvocation[]): Promise<Array<AppendedInvocation | undefined>> {
    const input = rows.map((row, ord) => ({ ord, ...row }));
    type Output = AppendedInvocation & { max_queued: number | null; unlocked: boolean };
    const append = (runner: Runner, locked: boolean) => prepared<Output>(runner, 'invocations.append', APPEND_SQL, [JSON.stringify(input), locked, TRANSITIONS.append.to]);
    let outputs = await append(db, false);
    if (outputs.some((output) => output.unlocked)) {
      outputs = await db.transaction(async (trx) => {
        await lockQueues(trx, rows.map((row) => row.workspace_id));
        return append(trx, true);
      });
    }
    const full = outputs.find((output) => output.max_queued !== null);
    if (full) throw new QueueFullError(full.max_queued!);
    const byId = new Map(outputs.map((row) => [row.id, row as AppendedInvocation]));
    return announced(db, sessionsOf([...byId.values()]), rows.map((row) => byId.get(row.id)));
  },

  /** `record`: feedback, COMPLETED as it is written. The caller holds the session's row lock and its order. */
  appendCompleted: async (trx: Runner, row: Omit<NewInvocation, 'status' | 'response' | 'completed_at'> & { order: number }) =>
    announced(trx, [row.session_id], (await trx<InvocationRow>('invocations').insert({ ...row, status: TRANSITIONS.record.to, response: '', completed_at: new Date() } as never).returning('*'))[0] as InvocationRow),

  /** `claim`: up to `limit` QUEUED invocations → IN_PROGRESS, each under its next lease, in fair order (CLAIM_SQL), each a new attempt of `executor`. */
  claimNext: (db: Db, limit: number, leaseMs: number, executor: string) => claimNext(db, limit, leaseMs, executor),

  /** `claim` inside the caller's transaction `trx`, holding its claim locks until it ends: claimNext without its wait for a contended workspace. */
  claimWithin: async (trx: Runner, limit: number, leaseMs: number, executor: string) =>
    (await claimIn(trx, limit, leaseMs, executor)).rows.filter((row) => row.waiting === null) as ClaimedRow[],

  /** `complete` of many runs in one statement: IN_PROGRESS under the named lease → COMPLETED. Gives the ids accepted. */
  complete: (db: Db, completions: Array<{ lease: Lease; response: string }>) => db.transaction((trx) => completeAll(trx, completions)),

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
      const completed = await completeAll(trx, [{ lease: run, response }]);
      return completed.has(run.id) ? appendExplanation(trx, run, explainer) : undefined;
    }),

  /** `fail` under the named lease, its attempt ERROR with `attemptError`; false when the lease was lost. */
  fail: (db: Db, lease: Lease, reason: string, attemptError = reason) =>
    endRun(
      db,
      lease,
      (trx) =>
        held(trx, 'fail', lease)
          .update({ status: TRANSITIONS.fail.to, error: reason.slice(0, MAX_ERROR), response: '', completed_at: trx.fn.now(), lease_expires_at: null })
          .returning('session_id'),
      'ERROR',
      attemptError,
      true,
    ),

  /**
   * `release` under the named lease: claimable again after `backoffMs`. No
   * wake-up is needed: the executor that released it claims again.
   */
  release: (db: Db, lease: Lease, reason: string, backoffMs: number) =>
    endRun(
      db,
      lease,
      (trx) =>
        held(trx, 'release', lease).update({
          status: TRANSITIONS.release.to,
          error: reason.slice(0, MAX_ERROR),
          lease_expires_at: null,
          available_at: trx.raw(`now() + ? * interval '1 millisecond'`, [backoffMs]),
        })
        .returning('session_id'),
      'RETRY',
      reason,
      false,
    ),

  /** `abandon`: QUEUED invocations of deleted models → ERROR with `reason`: they will not run. */
  abandonQueuedOf: async (db: Runner, modelIds: number[], reason: string) => {
    const abandoned = await db.transaction(async (trx) => {
      const abandoned = (await movable(trx, 'abandon')
        .whereIn('model_id', modelIds)
        .update({ status: TRANSITIONS.abandon.to, error: reason, response: '', completed_at: trx.fn.now() })
        .returning(['id', 'session_id'])) as Array<Pick<InvocationRow, 'id' | 'session_id'>>;
      await queueOutcomeDeliveries(trx, abandoned.map((row) => row.id));
      return abandoned;
    });
    return announced(db, sessionsOf(abandoned), abandoned.length);
  },

  /**
   * `cancel` of a session's invocations not yet finished: the named ones and
   * what they queued (the explanation of a prediction, its shadow copies),
   * or, without `ids`, all of them (those in `status` only, when given). The
   * session's rows cancelled; the attempts of those that ran end CANCELLED.
   */
  cancel: async (db: Runner, sessionId: string, ids?: string[], status?: 'QUEUED' | 'IN_PROGRESS'): Promise<InvocationRow[]> => {
    const ended = { status: TRANSITIONS.cancel.to, error: null, lease_expires_at: null, completed_at: db.fn.now() };
    const { cancelled, copies } = await db.transaction(async (trx) => {
      const rows = movable(trx, 'cancel').where({ session_id: sessionId });
      if (ids) rows.where((scope) => scope.whereIn('id', ids).orWhereIn('related_to', ids));
      if (status) rows.where({ status });
      const cancelled = (await rows.update(ended).returning('*')) as InvocationRow[];
      // A shadow copy only answers what its prediction asked: once that is not wanted, neither is the copy.
      const copies = cancelled.length ? ((await movable(trx, 'cancel').whereIn('shadow_of', cancelled.map((row) => row.id)).update(ended).returning('*')) as InvocationRow[]) : [];
      await endAttempts(trx, [...cancelled, ...copies], 'CANCELLED');
      await queueOutcomeDeliveries(trx, cancelled.map((row) => row.id));
      return { cancelled, copies };
    });
    return announced(db, sessionsOf([...cancelled, ...copies]), cancelled);
  },

  /**
   * `expire`: IN_PROGRESS under leases that ran out (their workers died) →
   * QUEUED; their attempts end LOST. How many.
   */
  expireLeases: async (db: Runner): Promise<number> => {
    const expired = await db.transaction(async (trx) => {
      const expired = (await scans.expiredLeases(trx).update({ status: TRANSITIONS.expire.to, lease_expires_at: null }).returning(['id', 'attempts', 'session_id'])) as Array<Lease & Pick<InvocationRow, 'session_id'>>;
      await endAttempts(trx, expired, 'LOST', LEASE_RAN_OUT);
      return expired;
    });
    return announced(db, sessionsOf(expired), expired.length);
  },

  /**
   * `requeue` of a failed or cancelled invocation of an OPEN session: QUEUED
   * again, its error and result cleared, and its
   * retry budget counted anew from the attempts made so far. The row, or
   * undefined when it is not in a `from` status or the session is not OPEN.
   * Throws QueueFullError, and moves nothing, when the workspace's queue is
   * at its `max_queued`: a re-run queues work as an append does.
   */
  requeue: async (db: Runner, session: Pick<SessionRow, 'id' | 'workspace_id'>, id: string): Promise<InvocationRow | undefined> => {
    const row = await db.transaction(async (trx) => {
      const [limit] = await lockQueues(trx, [session.workspace_id]);
      if (limit && (await queuedIn(trx, session.workspace_id)) >= limit.max_queued) throw new QueueFullError(limit.max_queued);
      const [moved] = (await movable(trx, 'requeue')
        .where({ id, session_id: session.id })
        .whereExists((open) => open.select(trx.raw('1')).from('sessions').where({ id: session.id, state: 'OPEN' }))
        .update({
          status: TRANSITIONS.requeue.to,
          error: null,
          response: '',
          started_at: null,
          completed_at: null,
          lease_expires_at: null,
          available_at: null,
          rerun_attempts: trx.ref('attempts'),
        })
        .returning('*')) as InvocationRow[];
      return moved;
    });
    return announced(db, row ? [row.session_id] : [], row);
  },
};

/**
 * What the sweeper looks for on every pass, in every process that runs it,
 * through a partial index (plans.test.ts checks the plan): a pass costs the
 * same with a hundred invocations or a hundred million.
 */
export const scans = {
  /** IN_PROGRESS under a lease that ran out. */
  expiredLeases: (db: Runner) => movable(db, 'expire').where('lease_expires_at', '<', db.fn.now()),
};
