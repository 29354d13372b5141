import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { serverUrlOf } from '../../infra/db/database.js';
import { CHANGES_CHANNEL } from '../../infra/db/change-feed.js';
import { until } from '../../test/support/until.js';
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

  const append = async (count: number, db = iris.t.platform.db) => {
    const rows = Array.from({ length: count }, () => queuedPredict({ workspaceId: iris.owner.ws.id, sessionId: iris.sessionId, userId: iris.owner.user.id, modelId: iris.modelId }));
    return (await invocationState.appendQueued(db, rows)).map((row) => row!.id);
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
      // Why the stream's `id:` is a snapshot and not the event's own id: the event sent later has the lower id, so
      // resuming "after the last event id seen" would skip it for good.
      expect(BigInt(later.events[0]!.id) < BigInt(before.events.at(-1)!.id), "the later event's id is the lower").to.equal(true);
    } finally {
      if (!open.isCompleted()) await open.rollback();
    }
  });

  it('tells the other processes of each change once it is committed, with no NOTIFY in the writing transaction', async function () {
    needsPostgres(this, 'PGlite belongs to one process: there is no other to tell');
    const db = iris.t.platform.db;
    const heard: string[] = [];
    const elsewhere = new pg.Client({ connectionString: serverUrlOf(db) });
    await elsewhere.connect();
    try {
      elsewhere.on('notification', (message) => heard.push(message.payload ?? ''));
      await elsewhere.query(`listen ${CHANGES_CHANNEL}`);
      const open = await db.transaction();
      const [id] = await append(1, open);
      const ofThisSession = `invocations:${iris.sessionId}`;
      await sleep(100);
      expect(heard, 'before the commit').to.not.include(ofThisSession);
      await open.commit();
      await until(async () => heard.includes(ofThisSession), 'the announcement after the commit, naming the session');
      heard.length = 0;
      await invocationState.cancel(db, iris.sessionId, [id!]);
      await until(async () => heard.includes(ofThisSession), 'the announcement of the cancel');
    } finally {
      await elsewhere.end();
    }
    // A NOTIFY in a trigger would hold the database's notification lock through each writing transaction's commit.
    const triggers = (await db.raw(`select proname, prosrc from pg_proc where proname in ('didyma_invocation_appended', 'didyma_invocation_moved')`)) as {
      rows: Array<{ proname: string; prosrc: string }>;
    };
    expect(triggers.rows).to.have.length(2);
    for (const trigger of triggers.rows) expect(trigger.prosrc, trigger.proname).to.not.include('pg_notify');
  });
});
