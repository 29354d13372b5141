import { expect } from 'chai';
import { unique } from '../../test/support/platform.js';
import { queuedPredict, startIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { invocationsStore, type InvocationRow, type InvocationStatus } from './store.js';
import { DELETED_BEFORE_RUN, TRANSITIONS, invocationState, type Lease } from './state.js';

type Start = 'QUEUED' | 'IN_PROGRESS' | 'IN_PROGRESS, lease run out' | 'COMPLETED' | 'ERROR';
type Write = 'claim' | 'heartbeat' | 'complete' | 'fail' | 'release' | 'expire' | 'cancel';

const LEASE_MS = 60_000;
const STARTS: Start[] = ['QUEUED', 'IN_PROGRESS', 'IN_PROGRESS, lease run out', 'COMPLETED', 'ERROR'];

/**
 * Every write from every status, under the row's lease and under an older one:
 * the status it leaves, or null when it is refused and leaves the row as it was.
 */
const EXPECTED: Record<Write, Record<Start, { own: InvocationStatus | null; stale: InvocationStatus | null }>> = {
  claim: {
    QUEUED: { own: 'IN_PROGRESS', stale: 'IN_PROGRESS' },
    IN_PROGRESS: { own: null, stale: null },
    'IN_PROGRESS, lease run out': { own: 'IN_PROGRESS', stale: 'IN_PROGRESS' },
    COMPLETED: { own: null, stale: null },
    ERROR: { own: null, stale: null },
  },
  heartbeat: {
    QUEUED: { own: null, stale: null },
    IN_PROGRESS: { own: 'IN_PROGRESS', stale: null },
    'IN_PROGRESS, lease run out': { own: 'IN_PROGRESS', stale: null },
    COMPLETED: { own: null, stale: null },
    ERROR: { own: null, stale: null },
  },
  complete: {
    QUEUED: { own: null, stale: null },
    IN_PROGRESS: { own: 'COMPLETED', stale: null },
    'IN_PROGRESS, lease run out': { own: 'COMPLETED', stale: null },
    COMPLETED: { own: null, stale: null },
    ERROR: { own: null, stale: null },
  },
  fail: {
    QUEUED: { own: null, stale: null },
    IN_PROGRESS: { own: 'ERROR', stale: null },
    'IN_PROGRESS, lease run out': { own: 'ERROR', stale: null },
    COMPLETED: { own: null, stale: null },
    ERROR: { own: null, stale: null },
  },
  release: {
    QUEUED: { own: null, stale: null },
    IN_PROGRESS: { own: 'QUEUED', stale: null },
    'IN_PROGRESS, lease run out': { own: 'QUEUED', stale: null },
    COMPLETED: { own: null, stale: null },
    ERROR: { own: null, stale: null },
  },
  // Cancelling (the model was deleted) names no lease: only QUEUED work is stopped.
  cancel: {
    QUEUED: { own: 'ERROR', stale: 'ERROR' },
    IN_PROGRESS: { own: null, stale: null },
    'IN_PROGRESS, lease run out': { own: null, stale: null },
    COMPLETED: { own: null, stale: null },
    ERROR: { own: null, stale: null },
  },
  // Expiry names no lease: it looks only at the clock.
  expire: {
    QUEUED: { own: null, stale: null },
    IN_PROGRESS: { own: null, stale: null },
    'IN_PROGRESS, lease run out': { own: 'QUEUED', stale: 'QUEUED' },
    COMPLETED: { own: null, stale: null },
    ERROR: { own: null, stale: null },
  },
};

describe('invocation state: every transition is one conditional write, and no other is possible', () => {
  let iris: IrisSession;
  before(async () => {
    iris = await startIrisSession(unique('v'));
    // The relay expires leases on its own every pass: stopped, so only the writes under test move rows.
    await iris.t.platform.relay.stop();
  });
  after(() => iris.close());

  /** A row in `start`, its current lease being number 2. */
  async function rowIn(start: Start): Promise<InvocationRow> {
    const { t, owner, modelId, sessionId } = iris;
    const [row] = await invocationState.appendQueued(t.platform.db, [queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId })]);
    const status = start.startsWith('IN_PROGRESS') ? 'IN_PROGRESS' : start;
    const leaseEnds = start === 'IN_PROGRESS' ? new Date(Date.now() + LEASE_MS) : start === 'IN_PROGRESS, lease run out' ? new Date(Date.now() - 1000) : null;
    // Test setup only: production code moves a row only through state.ts.
    await t.platform.db('invocations').where({ id: row!.id }).update({ status, attempts: 2, lease_expires_at: leaseEnds });
    return (await invocationsStore.byId(t.platform.db, row!.id))!;
  }

  async function apply(write: Write, lease: Lease): Promise<boolean> {
    const db = iris.t.platform.db;
    switch (write) {
      case 'claim':
        return (await invocationState.runWrites(db, [lease.id], [], LEASE_MS)).claimed.has(lease.id);
      case 'heartbeat':
        return invocationState.heartbeat(db, lease, LEASE_MS);
      case 'complete':
        return (await invocationState.runWrites(db, [], [{ lease, response: '{"ok":1}' }], LEASE_MS)).completed.has(lease.id);
      case 'fail':
        return invocationState.fail(db, lease, 'broken');
      case 'release':
        return invocationState.release(db, lease, 'try again');
      case 'expire':
      case 'cancel': {
        // Both move every row they apply to: whether they moved this one is in the row.
        const before = (await invocationsStore.byId(db, lease.id))!;
        if (write === 'expire') await invocationState.expireLeases(db);
        else await invocationState.cancelQueuedOf(db, [iris.modelId], DELETED_BEFORE_RUN);
        return (await invocationsStore.byId(db, lease.id))!.status !== before.status;
      }
    }
  }

  for (const write of Object.keys(EXPECTED) as Write[]) {
    for (const start of STARTS) {
      for (const which of ['own', 'stale'] as const) {
        const expected = EXPECTED[write][start][which];
        it(`${write} from ${start} under ${which === 'own' ? 'its lease' : 'an older lease'}: ${expected ? `→ ${expected}` : 'refused'}`, async () => {
          const before = await rowIn(start);
          const lease = { id: before.id, attempts: which === 'own' ? before.attempts : before.attempts - 1 };
          const applied = await apply(write, lease);
          const after = (await invocationsStore.byId(iris.t.platform.db, before.id))!;
          expect(applied, 'applied').to.equal(expected !== null);
          if (expected === null) expect(after).to.deep.equal(before);
          else expect(after.status).to.equal(expected);
          if (write === 'claim' && expected) expect(after.attempts, 'a claim takes the next lease').to.equal(before.attempts + 1);
        });
      }
    }
  }

  it('agrees with the table of transitions the module declares', () => {
    for (const write of ['claim', 'complete', 'fail', 'release', 'expire', 'cancel'] as const) {
      const legal = STARTS.filter((start) => EXPECTED[write][start].own !== null).map((start) => (start.startsWith('IN_PROGRESS') ? 'IN_PROGRESS' : start));
      expect([...new Set(legal)].sort(), write).to.deep.equal([...TRANSITIONS[write].from].sort());
      for (const start of STARTS) {
        const to = EXPECTED[write][start].own;
        if (to) expect(to, `${write} from ${start}`).to.equal(TRANSITIONS[write].to);
      }
    }
  });

  it('appends only QUEUED rows, and only to an OPEN session of the caller', async () => {
    const { t, owner, modelId, sessionId } = iris;
    const foreign = queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id + 1_000_000, modelId });
    const own = { ...queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }), status: 'COMPLETED' } as never;
    const [refused, appended] = await invocationState.appendQueued(t.platform.db, [foreign, own]);
    expect(refused).to.equal(undefined);
    expect(appended).to.include({ status: 'QUEUED', attempts: 0 });
  });
});
