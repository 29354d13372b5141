import { expect } from 'chai';
import { unique } from '../../test/support/platform.js';
import { queuedPredict, startStillIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { needsPostgres } from '../../test/support/skips.js';
import { FIRST_SNAPSHOT, invocationEventsStore as events } from './events.js';
import { invocationState } from './state.js';

describe('invocation events: every status change, read by snapshot', () => {
  let iris: IrisSession;
  before(async () => {
    iris = await startStillIrisSession(unique('v'));
  });
  after(async () => {
    await iris?.close();
  });

  const append = async (count: number) => {
    const rows = Array.from({ length: count }, () => queuedPredict({ workspaceId: iris.owner.ws.id, sessionId: iris.sessionId, userId: iris.owner.user.id, modelId: iris.modelId }));
    return (await invocationState.appendQueued(iris.t.platform.db, rows)).map((row) => row!.id);
  };

  it('records each status an invocation takes, whichever transition wrote it, and a read gives what is new since the last', async () => {
    const db = iris.t.platform.db;
    const first = await events.since(db, iris.sessionId, FIRST_SNAPSHOT);
    const [a, b] = await append(2);
    await invocationState.cancel(db, iris.sessionId, [a!]);
    const after = await events.since(db, iris.sessionId, first.snapshot);
    expect(after.events.map((e) => [e.invocation_id, e.status])).to.deep.equal([
      [a, 'QUEUED'],
      [b, 'QUEUED'],
      [a, 'CANCELLED'],
    ]);
    // A write that changes no status (a publication mark) is no event.
    await invocationState.markPublished(db, [b!]);
    expect((await events.since(db, iris.sessionId, after.snapshot)).events).to.deep.equal([]);
  });

  it('misses no event of a transaction that commits after a later one', async function () {
    needsPostgres(this, 'two transactions open at once (PGlite has one connection)');
    const db = iris.t.platform.db;
    const [slow, fast] = await append(2);
    const start = await events.since(db, iris.sessionId, FIRST_SNAPSHOT);
    const open = await db.transaction();
    try {
      await invocationState.cancel(open, iris.sessionId, [slow!]); // takes the lower event id, commits last
      await invocationState.cancel(db, iris.sessionId, [fast!]);
      const before = await events.since(db, iris.sessionId, start.snapshot);
      expect(before.events.map((e) => e.invocation_id)).to.deep.equal([fast]);
      await open.commit();
      const later = await events.since(db, iris.sessionId, before.snapshot);
      expect(later.events.map((e) => [e.invocation_id, e.status])).to.deep.equal([[slow, 'CANCELLED']]);
    } finally {
      if (!open.isCompleted()) await open.rollback();
    }
  });

  it('refuses a Last-Event-ID it did not send', () => {
    expect(events.checkSnapshot('12:15:12,14')).to.equal('12:15:12,14');
    for (const bad of ['', 'x', '1:2', "1:2:3'; drop table invocations; --", `1:2:${'9'.repeat(30)}`]) {
      expect(() => events.checkSnapshot(bad), bad).to.throw('Last-Event-ID');
    }
  });
});
