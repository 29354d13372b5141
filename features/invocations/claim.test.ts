import { expect } from 'chai';
import { makeWorkspace, unique } from '../../test/support/platform.js';
import { queuedPredict, sessionIn, startStillIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { pino } from 'pino';
import { needsPostgres } from '../../test/support/skips.js';
import { until } from '../../test/support/until.js';
import { acquireChangeFeed, releaseChangeFeed } from '../../infra/db/change-feed.js';
import { invocationState } from './state.js';

const LEASE_MS = 60_000;

describe('the fair claim with more workspaces queued than rows claimed', () => {
  let iris: IrisSession;
  // The session of the iris model's owner in each new workspace.
  const sessions = new Map<number, string>();
  before(async () => {
    iris = await startStillIrisSession(unique('v'));
  });
  after(async () => {
    await iris?.t.platform.db('invocations').whereIn('session_id', [...sessions.values()]).delete();
    await iris?.close();
  });

  const queuedIn = (workspaceId: number) => queuedPredict({ workspaceId, sessionId: sessions.get(workspaceId)!, userId: iris.owner.user.id, modelId: iris.modelId });

  /** Leaves only the QUEUED rows the test makes next. */
  const clearQueued = () => iris.t.platform.db('invocations').whereIn('session_id', [...sessions.values()]).where({ status: 'QUEUED' }).delete();

  /** `count` QUEUED predictions of a new workspace, of which the first `running` are in flight under a live lease. */
  async function workspaceWith(count: number, running: number): Promise<number> {
    const { db } = iris.t.platform;
    const workspace = await makeWorkspace(iris.t.platform);
    sessions.set(workspace.id, await sessionIn(db, { workspaceId: workspace.id, userId: iris.owner.user.id, modelId: iris.modelId }));
    const rows = Array.from({ length: count }, () => queuedIn(workspace.id));
    const ids = (await invocationState.appendQueued(db, rows)).map((row) => row!.id);
    if (running) {
      await db('invocations').whereIn('id', ids.slice(0, running)).update({ status: 'IN_PROGRESS', lease_expires_at: db.raw(`now() + interval '1 minute'`) });
      await db('workspace_turns').insert({ workspace_id: workspace.id, last_claimed_at: db.fn.now() });
    }
    return workspace.id;
  }

  it('gives a workspace behind its share every turn it is owed, though it reads only a row or two of the others', async () => {
    const busy: number[] = [];
    for (let i = 0; i < 12; i++) busy.push(await workspaceWith(5, 2));
    const behind = await workspaceWith(5, 0);
    // Shares of the next rows: behind 1, 2, 3, 4…; each busy one 3, 4…. Four turns: behind's 1 and 2, then at 3
    // the busy ones served longest ago: their turns came before behind's work arrived.
    const { rows } = await invocationState.claimNext(iris.t.platform.db, 4, LEASE_MS, 'test');
    const taken = rows.map((row) => row.workspace_id);
    expect(taken.filter((id) => id === behind)).to.have.length(2);
    expect(taken.filter((id) => id !== behind)).to.have.members(busy.slice(0, 2));
  });

  it('takes one row from each of as many workspaces as it claims when they are even', async () => {
    const even: number[] = [];
    for (let i = 0; i < 10; i++) even.push(await workspaceWith(3, 0));
    const { rows } = await invocationState.claimNext(iris.t.platform.db, 6, LEASE_MS, 'test');
    const taken = rows.map((row) => row.workspace_id).filter((id) => even.includes(id));
    expect(taken).to.have.length(6);
    expect(new Set(taken).size).to.equal(6);
  });

  it('serves a workspace served before ahead of a backlog that arrived all at once after its last turn', async () => {
    const { db } = iris.t.platform;
    await clearQueued();
    const quiet = await workspaceWith(0, 0);
    await db('workspace_turns').insert({ workspace_id: quiet, last_claimed_at: db.raw(`now() - interval '1 second'`) });
    const flood: number[] = [];
    for (let i = 0; i < 12; i++) flood.push(await workspaceWith(3, 0));
    await invocationState.appendQueued(db, [queuedIn(quiet)]);
    // All at share 1: the flood's workspaces were never served, and count from when their work arrived.
    const { rows } = await invocationState.claimNext(db, 4, LEASE_MS, 'test');
    expect(rows.map((row) => row.workspace_id)).to.have.members([quiet, ...flood.slice(0, 3)]);
  });

  it("hands each claimed run its workspace's weight, for the executor's model slots", async () => {
    const { db } = iris.t.platform;
    await clearQueued();
    const heavy = await workspaceWith(2, 0);
    await db('workspaces').where({ id: heavy }).update({ share_weight: 3 });
    const light = await workspaceWith(2, 0);
    const { rows } = await invocationState.claimNext(db, 4, LEASE_MS, 'test');
    expect(rows.map((row) => [row.workspace_id, row.share_weight])).to.have.deep.members([[heavy, 3], [heavy, 3], [light, 1], [light, 1]]);
  });

  it('takes its turns without announcing an identity change, so the authentication caches stay warm', async function () {
    needsPostgres(this, 'only PostgreSQL announces the changes other processes make');
    const { db } = iris.t.platform;
    const feed = acquireChangeFeed(db, pino({ level: 'silent' }));
    try {
      await until(async () => feed.generation('identity') !== undefined, 'the feed to listen');
      // A change of models, not one this process's query hook would see: heard, it was announced after every earlier commit.
      const announcedSoFar = async () => {
        const models = feed.generation('models');
        await db.raw('with touched as (update models set id = id where id = -1 returning id) select count(*) from touched');
        await until(async () => feed.generation('models') !== models, 'a later change to be announced');
      };
      await workspaceWith(3, 0);
      await announcedSoFar(); // the new workspace's own identity change is heard before the count starts
      const identity = feed.generation('identity');
      expect((await invocationState.claimNext(db, 3, LEASE_MS, 'test')).rows).to.have.length(3);
      await announcedSoFar();
      expect(feed.generation('identity')).to.equal(identity);
    } finally {
      await releaseChangeFeed(db);
    }
  });
});
