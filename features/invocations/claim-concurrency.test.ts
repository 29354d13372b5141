import { expect } from 'chai';
import { makeWorkspace, unique } from '../../test/support/platform.js';
import { queuedPredict, sessionIn, startStillIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { needsPostgres } from '../../test/support/skips.js';
import { until } from '../../test/support/until.js';
import { invocationState } from './state.js';

const LEASE_MS = 60_000;

/** How long a claim that must not wait on another may take at most: generous, it should take milliseconds. */
const NOT_BLOCKED_MS = 10_000;

/** `work`, or a failure saying what blocked when it takes longer than NOT_BLOCKED_MS. */
async function withinBound<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} waited ${NOT_BLOCKED_MS} ms: it was blocked`)), NOT_BLOCKED_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('claims of many executors at once', () => {
  let iris: IrisSession;
  const sessions: string[] = [];
  before(async () => {
    iris = await startStillIrisSession(unique('v'));
  });
  // Each test starts with nothing queued or in flight: the rows of one would count against the next one's limits.
  afterEach(async () => {
    await iris.t.platform.db('invocations').whereIn('session_id', [...sessions, iris.sessionId]).delete();
  });
  after(async () => {
    await iris?.close();
  });

  /** A new workspace with `count` QUEUED predictions and the quota `quota`. */
  async function workspaceWith(count: number, quota: { max_in_flight?: number } = {}): Promise<number> {
    const { db } = iris.t.platform;
    const workspace = await makeWorkspace(iris.t.platform);
    if (Object.keys(quota).length) await db('workspaces').where({ id: workspace.id }).update(quota);
    const owner = { workspaceId: workspace.id, userId: iris.owner.user.id, modelId: iris.modelId };
    const sessionId = await sessionIn(db, owner);
    sessions.push(sessionId);
    await invocationState.appendQueued(db, Array.from({ length: count }, () => queuedPredict({ ...owner, sessionId })));
    return workspace.id;
  }

  /** The calls in flight of each workspace in `workspaceIds`. */
  async function inFlight(workspaceIds: number[]): Promise<Map<number, number>> {
    const rows = (await iris.t.platform.db('invocations').whereIn('workspace_id', workspaceIds).where({ status: 'IN_PROGRESS' }).groupBy('workspace_id').select('workspace_id').count({ n: '*' })) as Array<{ workspace_id: number; n: string | number }>;
    return new Map(rows.map((row) => [row.workspace_id, Number(row.n)]));
  }

  it('dates a claim by its own statement: a claim begun before the row was queued never starts it before its queueing', async function () {
    needsPostgres(this, 'the row is queued on another connection while the claim transaction is open');
    const { db } = iris.t.platform;
    const claimed = await db.transaction(async (trx) => {
      // The claim transaction's start, fixed before the row exists, as when it waited for its claim locks.
      await trx.raw('select now()');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await workspaceWith(1);
      return invocationState.claimWithin(trx, 1, LEASE_MS, 'executor-a');
    });
    expect(claimed).to.have.length(1);
    const row = await db('invocations').where({ id: claimed[0]!.id }).first('created_at', 'started_at');
    expect(new Date(row.started_at).getTime()).to.be.at.least(new Date(row.created_at).getTime());
  });

  it("does not wait for a claim held open to take another workspace's work, limited or not", async function () {
    needsPostgres(this, 'claims run one at a time on the embedded database, which has one connection');
    const { db } = iris.t.platform;
    const held = await workspaceWith(5, { max_in_flight: 4 });
    const limited = await workspaceWith(5, { max_in_flight: 4 });
    const open = await workspaceWith(5);
    // `held` is first in line: `limited` and `open` had a turn just now, `held` never did.
    await db('workspace_turns').insert([limited, open].map((id) => ({ workspace_id: id, last_claimed_at: db.fn.now() })));
    await db.transaction(async (trx) => {
      const first = await invocationState.claimWithin(trx, 1, LEASE_MS, 'executor-a');
      expect(first.map((row) => row.workspace_id)).to.deep.equal([held]);
      // Executor b claims on another connection while a's claim holds `held`'s lock and its row.
      const { rows } = await withinBound(invocationState.claimNext(db, 6, LEASE_MS, 'executor-b'), "executor b's claim");
      const taken = rows.map((row) => row.workspace_id);
      expect(taken).to.not.include(held);
      expect(taken.filter((id) => id === limited)).to.have.length.greaterThan(0);
      expect(taken.filter((id) => id === open)).to.have.length.greaterThan(0);
    });
    // Once a's claim committed, `held`'s work is claimable again.
    const { rows } = await invocationState.claimNext(db, 20, LEASE_MS, 'executor-c');
    expect(rows.filter((row) => row.workspace_id === held)).to.have.length(3);
  });

  it('waits for a claim held open when its limited workspace is the only work, then takes what the limit leaves', async function () {
    needsPostgres(this, 'claims run one at a time on the embedded database, which has one connection');
    const { db } = iris.t.platform;
    const only = await workspaceWith(5, { max_in_flight: 4 });
    const waiting = async () => Number(((await db.raw(`select count(*) as n from pg_locks where locktype = 'advisory' and not granted`)) as { rows: Array<{ n: string }> }).rows[0]!.n) > 0;
    let later: Promise<{ rows: Array<{ workspace_id: number }> }> | undefined;
    await db.transaction(async (trx) => {
      expect(await invocationState.claimWithin(trx, 1, LEASE_MS, 'executor-a')).to.have.length(1);
      later = invocationState.claimNext(db, 10, LEASE_MS, 'executor-b');
      // b found the workspace's lock taken and nothing else to claim: it waits for the lock instead of coming back empty.
      await until(waiting, "executor b's claim to wait for the workspace's claim lock");
    });
    const { rows } = await withinBound(later!, "executor b's claim after a's commit");
    expect(rows.map((row) => row.workspace_id)).to.deep.equal([only, only, only]);
  });

  /** Eight executors claiming `limit` each at once, on their own connections, `rounds` times, none finishing a run; `check` after each round. */
  async function claimTogether(rounds: number, limit: number, check: () => Promise<void>): Promise<Set<string>> {
    const claimed = new Set<string>();
    for (let round = 0; round < rounds; round++) {
      const claims = await Promise.all(Array.from({ length: 8 }, (_, executor) => invocationState.claimNext(iris.t.platform.db, limit, LEASE_MS, `executor-${executor}`)));
      for (const row of claims.flatMap((claim) => claim.rows)) {
        expect(claimed.has(row.id), 'an invocation claimed twice').to.equal(false);
        claimed.add(row.id);
      }
      await check();
    }
    return claimed;
  }

  it('keeps each workspace within its max_in_flight while several connections claim at once', async function () {
    needsPostgres(this, 'claims run one at a time on the embedded database, which has one connection');
    const capped = [await workspaceWith(40, { max_in_flight: 3 }), await workspaceWith(40, { max_in_flight: 5 })];
    const free = [await workspaceWith(40), await workspaceWith(40)];
    const within = async () => {
      const running = await inFlight(capped);
      expect(running.get(capped[0]!) ?? 0).to.be.at.most(3);
      expect(running.get(capped[1]!) ?? 0).to.be.at.most(5);
    };
    const claimed = await claimTogether(4, 4, within);
    // One more claim, alone, takes whatever the rounds left claimable: each limit is then full, not passed.
    const last = await invocationState.claimNext(iris.t.platform.db, 100, LEASE_MS, 'executor-last');
    for (const row of last.rows) claimed.add(row.id);
    const running = await inFlight([...capped, ...free]);
    expect([running.get(capped[0]!), running.get(capped[1]!), running.get(free[0]!), running.get(free[1]!)]).to.deep.equal([3, 5, 40, 40]);
    expect(claimed.size).to.equal(88);
  });

  it("keeps a deployment within its max_concurrent_calls while several connections claim its workspaces' work at once", async function () {
    needsPostgres(this, 'claims run one at a time on the embedded database, which has one connection');
    const { db } = iris.t.platform;
    // Every queued invocation runs the iris model, on its owner's deployment: at most 4 calls at once, whoever claims.
    const deploymentId = ((await db('models').where({ id: iris.modelId }).first('deployment_id')) as { deployment_id: number }).deployment_id;
    const owner = { workspaceId: iris.owner.ws.id, sessionId: iris.sessionId, userId: iris.owner.user.id, modelId: iris.modelId };
    await invocationState.appendQueued(db, Array.from({ length: 40 }, () => queuedPredict(owner)));
    const others = [await workspaceWith(20), await workspaceWith(20)];
    await db('deployments').where({ id: deploymentId }).update({ max_concurrent_calls: 4 });
    try {
      const calls = async () => [...(await inFlight([owner.workspaceId, ...others])).values()].reduce((sum, n) => sum + n, 0);
      const claimed = await claimTogether(3, 4, async () => {
        expect(await calls()).to.be.at.most(4);
      });
      await invocationState.claimNext(db, 100, LEASE_MS, 'executor-last');
      expect(await calls()).to.equal(4);
      expect(claimed.size).to.be.at.most(4);
    } finally {
      await db('deployments').where({ id: deploymentId }).update({ max_concurrent_calls: null });
    }
  });
});
