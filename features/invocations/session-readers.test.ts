import { expect } from 'chai';
import { ChangeFeed } from '../../infra/db/change-feed.js';
import type { StreamBatch, StreamFollower } from '../../infra/http/event-stream.js';
import { until } from '../../test/support/until.js';
import { unique } from '../../test/support/platform.js';
import { queuedPredict, sessionIn, startStillIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { FIRST_SNAPSHOT, invocationEventsStore, type InvocationEvent } from './events.js';
import { SessionEventReaders } from './session-readers.js';
import { parseSnapshot } from './snapshot.js';
import { invocationState } from './state.js';

/** A follower that keeps what it is handed. */
function follower() {
  const batches: Array<StreamBatch<InvocationEvent>> = [];
  const received: StreamFollower<InvocationEvent> & { batches: typeof batches; ids: () => string[] } = {
    batches,
    deliver: (batch) => void batches.push(batch),
    fail: (error) => {
      throw error;
    },
    ids: () => batches.flatMap((batch) => batch.items.map((item) => `${item.invocation_id}:${item.status}`)),
  };
  return received;
}

describe('session event readers: one read per session, for its streams only', () => {
  let iris: IrisSession;
  let other: string;
  before(async () => {
    iris = await startStillIrisSession(unique('v'));
    other = await sessionIn(iris.t.platform.db, { workspaceId: iris.owner.ws.id, userId: iris.owner.user.id, modelId: iris.modelId });
  });
  after(async () => {
    await iris.t.platform.db('invocations').where({ session_id: other }).delete();
    await iris?.close();
  });

  const append = async (sessionId: string, count: number) => {
    const rows = Array.from({ length: count }, () => queuedPredict({ workspaceId: iris.owner.ws.id, sessionId, userId: iris.owner.user.id, modelId: iris.modelId }));
    return (await invocationState.appendQueued(iris.t.platform.db, rows)).map((row) => `${row!.id}:QUEUED`);
  };

  /** Readers over the test database, told of changes by `feed` alone (the platform's own announcements go to its feed). */
  const readersOn = (feed: ChangeFeed, pollMs = 60_000) => new SessionEventReaders(iris.t.platform.db, () => feed, pollMs);

  it('serves every stream of a session with one read, each with what its own position has yet to see', async () => {
    const feed = new ChangeFeed();
    feed.setListening(true);
    const readers = readersOn(feed);
    const early = await append(iris.sessionId, 2);
    const middle = parseSnapshot((await invocationEventsStore.since(iris.t.platform.db, iris.sessionId, FIRST_SNAPSHOT)).snapshot);
    const late = await append(iris.sessionId, 1);
    const [fromStart, fromMiddle] = [follower(), follower()];
    const stops = [readers.follow(iris.sessionId, parseSnapshot(FIRST_SNAPSHOT), fromStart), readers.follow(iris.sessionId, middle, fromMiddle)];
    try {
      await until(async () => fromStart.batches.length > 0 && fromMiddle.batches.length > 0, 'both streams to be served');
      expect(readers.reads, 'one read for the two streams that joined together').to.equal(1);
      expect(fromStart.ids()).to.include.members([...early, ...late]);
      expect(fromMiddle.ids(), 'what came after its position only').to.deep.equal(late);

      const next = await append(iris.sessionId, 1);
      feed.tableChanged('invocations', [iris.sessionId]);
      await until(async () => fromMiddle.ids().includes(next[0]!), 'the new event');
      expect(readers.reads, 'one more read for one announcement').to.equal(2);
      expect(fromStart.ids().filter((id) => id === next[0])).to.have.length(1);
    } finally {
      stops.forEach((stop) => stop());
    }
    expect(readers.sessions, 'no reader left without a stream').to.equal(0);
  });

  it('reads nothing for the changes of other sessions', async () => {
    const feed = new ChangeFeed();
    feed.setListening(true);
    const readers = readersOn(feed);
    const streams = Array.from({ length: 20 }, () => follower());
    const stops = streams.map((stream) => readers.follow(iris.sessionId, parseSnapshot(FIRST_SNAPSHOT), stream));
    try {
      await until(async () => streams.every((stream) => stream.batches.length > 0), 'every stream to be served');
      const before = readers.reads;
      for (let i = 0; i < 10; i++) {
        await append(other, 1);
        feed.tableChanged('invocations', [other]);
      }
      // Announced after the ten: the streams' reader wakes once, so every announcement before it has been handled.
      const mine = await append(iris.sessionId, 1);
      feed.tableChanged('invocations', [iris.sessionId]);
      await until(async () => streams.every((stream) => stream.ids().includes(mine[0]!)), 'the change of their own session');
      expect(readers.reads - before, 'one read for twenty streams and their own change, none for the ten others').to.equal(1);
    } finally {
      stops.forEach((stop) => stop());
    }
  });

  it('reads each session on a timer while the change notifications are down', async () => {
    const feed = new ChangeFeed(); // never listening: as while the LISTEN connection is lost
    const readers = readersOn(feed, 50);
    const stream = follower();
    const stop = readers.follow(iris.sessionId, parseSnapshot(FIRST_SNAPSHOT), stream);
    try {
      await until(async () => stream.batches.length > 0, 'the first read');
      const unannounced = await append(iris.sessionId, 1);
      await until(async () => stream.ids().includes(unannounced[0]!), 'the change, found by polling');
    } finally {
      stop();
    }
  });
});
