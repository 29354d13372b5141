import { expect } from 'chai';
import { unique } from '../../test/support/platform.js';
import { queuedPredict, startStillIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { modelsStore, type ModelRow } from '../models/store.js';
import { invocationsStore, sessionsStore, type InvocationRow, type InvocationStatus } from './store.js';
import { DELETED_BEFORE_RUN, LEASE_RAN_OUT, TRANSITIONS, invocationState, type Lease, type Transition } from './state.js';

type Start = 'QUEUED' | 'IN_PROGRESS' | 'IN_PROGRESS, lease run out' | 'COMPLETED' | 'ERROR' | 'CANCELLED';

const LEASE_MS = 60_000;
const STARTS: Start[] = ['QUEUED', 'IN_PROGRESS', 'IN_PROGRESS, lease run out', 'COMPLETED', 'ERROR', 'CANCELLED'];
const statusOf = (start: Start): InvocationStatus => (start.startsWith('IN_PROGRESS') ? 'IN_PROGRESS' : (start as InvocationStatus));

/**
 * Every function that moves an existing row, the transition of TRANSITIONS it
 * writes, and what it asks of the lease beside the statuses: `own`, the run's
 * lease; `none live`, that no live lease holds the row; `any`, nothing.
 */
const WRITES = {
  claim: { transition: 'claim', lease: 'none live' },
  heartbeat: { transition: 'heartbeat', lease: 'own' },
  complete: { transition: 'complete', lease: 'own' },
  'complete and explain': { transition: 'complete', lease: 'own' },
  fail: { transition: 'fail', lease: 'own' },
  release: { transition: 'release', lease: 'own' },
  expire: { transition: 'expire', lease: 'none live' },
  abandon: { transition: 'abandon', lease: 'any' },
  cancel: { transition: 'cancel', lease: 'any' },
  requeue: { transition: 'requeue', lease: 'any' },
} as const satisfies Record<string, { transition: Transition; lease: 'own' | 'none live' | 'any' }>;
type Write = keyof typeof WRITES;

/** Whether `write` may move a row in `start` under its own or an older lease: its statuses come from TRANSITIONS alone. */
function allowed(write: Write, start: Start, which: 'own' | 'stale'): boolean {
  const { transition, lease } = WRITES[write];
  const from: readonly InvocationStatus[] = TRANSITIONS[transition].from;
  if (!from.includes(statusOf(start))) return false;
  if (lease === 'own') return which === 'own';
  if (lease === 'none live') return start !== 'IN_PROGRESS';
  return true;
}

describe('invocation state: every write is one transition of the table, allowed exactly from its statuses', () => {
  let iris: IrisSession;
  let model: ModelRow;
  before(async () => {
    // The sweeper expires leases on its own: stopped, so only the writes under test move rows.
    iris = await startStillIrisSession(unique('v'));
    model = (await modelsStore.byId(iris.t.platform.db, iris.modelId))!;
  });
  after(async () => {
    await iris?.close();
  });

  /** A row in `start`, its current lease being number 2. */
  async function rowIn(start: Start): Promise<InvocationRow> {
    const { t, owner, modelId, sessionId } = iris;
    const [row] = await invocationState.appendQueued(t.platform.db, [queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId })]);
    // A live lease shorter than a heartbeat's, so that a heartbeat within the same millisecond still moves it.
    const leaseEnds = start === 'IN_PROGRESS' ? new Date(Date.now() + LEASE_MS / 2) : start === 'IN_PROGRESS, lease run out' ? new Date(Date.now() - 1000) : null;
    // Test setup only: production code moves a row only through state.ts.
    await t.platform.db('invocations').where({ id: row!.id }).update({ status: statusOf(start), attempts: 2, lease_expires_at: leaseEnds });
    return (await invocationsStore.byId(t.platform.db, row!.id))!;
  }

  /** Applies `write` to the row under `lease`: whether it says it moved the row, or undefined for writes that move every row they apply to. */
  async function apply(write: Write, lease: Lease): Promise<boolean | undefined> {
    const db = iris.t.platform.db;
    switch (write) {
      case 'claim':
        // The fair claim takes whatever is next: whether it took this row among all the session's queued ones.
        return (await invocationState.claimNext(db, 10_000, LEASE_MS, 'state-test')).rows.some((row) => row.id === lease.id);
      case 'heartbeat':
        return invocationState.heartbeat(db, lease, LEASE_MS);
      case 'complete':
        return (await invocationState.complete(db, [{ lease, response: '{"ok":1}' }])).has(lease.id);
      case 'complete and explain': {
        const run = { ...(await invocationsStore.byId(db, lease.id))!, attempts: lease.attempts };
        return (await invocationState.completeAndExplain(db, run, '{"ok":1}', model)) !== undefined;
      }
      case 'fail':
        return invocationState.fail(db, lease, 'broken');
      case 'release':
        return invocationState.release(db, lease, 'try again', 0);
      case 'expire':
        return void (await invocationState.expireLeases(db));
      case 'abandon':
        return void (await invocationState.abandonQueuedOf(db, [iris.modelId], DELETED_BEFORE_RUN));
      case 'cancel':
        return (await invocationState.cancel(db, iris.sessionId, [lease.id])).some((row) => row.id === lease.id);
      case 'requeue':
        return (await invocationState.requeue(db, { id: iris.sessionId, workspace_id: iris.owner.ws.id }, lease.id)) !== undefined;
    }
  }

  for (const write of Object.keys(WRITES) as Write[]) {
    const { transition } = WRITES[write];
    for (const start of STARTS) {
      for (const which of ['own', 'stale'] as const) {
        const expected = allowed(write, start, which);
        const to = TRANSITIONS[transition].to;
        it(`${write} from ${start} under ${which === 'own' ? 'its lease' : 'an older lease'}: ${expected ? `→ ${to}` : 'refused'}`, async () => {
          const before = await rowIn(start);
          const lease = { id: before.id, attempts: which === 'own' ? before.attempts : before.attempts - 1 };
          const said = await apply(write, lease);
          const after = (await invocationsStore.byId(iris.t.platform.db, before.id))!;
          if (said !== undefined) expect(said, 'the write says it applied').to.equal(expected);
          if (!expected) return expect(after).to.deep.equal(before);
          expect(after, 'the row moved').to.not.deep.equal(before);
          expect(after.status).to.equal(to);
          if (transition === 'claim') expect(after.attempts, 'a claim takes the next lease').to.equal(before.attempts + 1);
          if (transition === 'requeue') expect(after, 'a re-run counts its attempts anew').to.include({ rerun_attempts: before.attempts, error: null });
          if (write === 'complete and explain') {
            const explanation = await iris.t.platform.db<InvocationRow>('invocations').where({ related_to: before.id }).first();
            expect(explanation, 'the explanation').to.include({ type: 'EXPLAIN', status: TRANSITIONS.explain.to });
          }
        });
      }
    }
  }

  /** A new QUEUED row of the session, and its claim as `executor` (the claim takes whatever is queued; this row's lease). */
  async function queuedRow(): Promise<{ id: string; claim: (executor?: string) => Promise<Lease> }> {
    const { t, owner, modelId, sessionId } = iris;
    const db = t.platform.db;
    const [row] = await invocationState.appendQueued(db, [queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId })]);
    const id = row!.id;
    return { id, claim: async (executor = 'executor-a') => (await invocationState.claimNext(db, 10_000, LEASE_MS, executor)).rows.find((claimed) => claimed.id === id)! };
  }
  const outcomes = async (id: string) =>
    (await invocationsStore.attemptsOf(iris.t.platform.db, id)).map(({ attempt, executor, outcome, error }) => ({ attempt, executor, outcome, error }));

  it('records every attempt: made by its claim as its executor\'s, ended by the write that ends its run', async () => {
    const db = iris.t.platform.db;
    const { id, claim } = await queuedRow();
    expect(await invocationState.release(db, await claim(), 'try again', 0)).to.equal(true);
    expect((await claim('executor-b')).attempts).to.equal(2);
    // Test setup only: the lease runs out as when its executor dies.
    await db('invocations').where({ id }).update({ lease_expires_at: new Date(Date.now() - 1000) });
    await invocationState.expireLeases(db);
    expect(await invocationState.fail(db, await claim(), 'Failed after 3 attempts: broken', 'broken')).to.equal(true);
    expect(await outcomes(id)).to.deep.equal([
      { attempt: 1, executor: 'executor-a', outcome: 'RETRY', error: 'try again' },
      { attempt: 2, executor: 'executor-b', outcome: 'LOST', error: LEASE_RAN_OUT },
      { attempt: 3, executor: 'executor-a', outcome: 'ERROR', error: 'broken' },
    ]);
    const attempts = await invocationsStore.attemptsOf(db, id);
    for (const attempt of attempts) expect(attempt.ended_at!.getTime()).to.be.at.least(attempt.started_at.getTime());
    // The polling read gives the same attempts in its one batched statement.
    const [read] = await invocationsStore.inSessionsOfUsers(db, [{ sessionId: iris.sessionId, modelId: iris.modelId, userId: iris.owner.user.id, id }]);
    expect(read!.attempts).to.deep.equal(attempts);
  });

  it('ends COMPLETED the attempt of a completion, in the batched statement of every completion', async () => {
    const { id, claim } = await queuedRow();
    expect(await invocationState.complete(iris.t.platform.db, [{ lease: await claim(), response: '{"ok":1}' }])).to.deep.equal(new Set([id]));
    expect(await outcomes(id)).to.deep.equal([{ attempt: 1, executor: 'executor-a', outcome: 'COMPLETED', error: null }]);
  });

  it('ends CANCELLED the attempt of a run cancelled while it runs', async () => {
    const { id, claim } = await queuedRow();
    await claim('executor-b');
    await invocationState.cancel(iris.t.platform.db, iris.sessionId, [id]);
    expect(await outcomes(id)).to.deep.equal([{ attempt: 1, executor: 'executor-b', outcome: 'CANCELLED', error: null }]);
  });

  it('re-runs a failed invocation as a new attempt, its attempts kept and its retry budget counted anew', async () => {
    const db = iris.t.platform.db;
    const { id, claim } = await queuedRow();
    expect(await invocationState.fail(db, await claim(), 'broken')).to.equal(true);
    expect(await invocationState.requeue(db, { id: iris.sessionId, workspace_id: iris.owner.ws.id }, id)).to.include({ status: 'QUEUED', rerun_attempts: 1, error: null });
    expect(await invocationState.complete(db, [{ lease: await claim(), response: '{"ok":1}' }])).to.deep.equal(new Set([id]));
    expect((await outcomes(id)).map((attempt) => attempt.outcome)).to.deep.equal(['ERROR', 'COMPLETED']);
  });

  it('walks every transition of the table that moves a row', () => {
    const moving = Object.entries(TRANSITIONS).filter(([, { from }]) => from.length).map(([name]) => name);
    expect([...new Set(Object.values(WRITES).map((write) => write.transition))].sort()).to.deep.equal(moving.sort());
  });

  it('appends only QUEUED rows, and only to an OPEN session of the caller', async () => {
    const { t, owner, modelId, sessionId } = iris;
    const foreign = queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id + 1_000_000, modelId });
    const own = { ...queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }), status: 'COMPLETED' } as never;
    const [refused, appended] = await invocationState.appendQueued(t.platform.db, [foreign, own]);
    expect(refused).to.equal(undefined);
    expect(appended).to.include({ status: TRANSITIONS.append.to, attempts: 0 });
  });

  it('records feedback as it is written, done', async () => {
    const { t, owner, modelId, sessionId } = iris;
    const order = await sessionsStore.takeOrder(t.platform.db, sessionId);
    const fields = { ...queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }), type: 'DATA_SUBMISSION' as const, request_type: 'FEEDBACK' as const };
    const recorded = await invocationState.appendCompleted(t.platform.db, { ...fields, order });
    expect(recorded).to.include({ status: TRANSITIONS.record.to, order });
  });
});
