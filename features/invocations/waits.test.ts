import { expect } from 'chai';
import { ChangeFeed } from '../../infra/db/change-feed.js';
import { unique } from '../../test/support/platform.js';
import { queuedPredict, startStillIrisSession, type IrisSession } from '../../test/support/fixtures.js';
import { SessionEventReaders } from './session-readers.js';
import { parseSnapshot } from './snapshot.js';
import { invocationState } from './state.js';
import { PredictionWaits } from './waits.js';

const LONG_MS = 60_000;

describe('prediction waits: bounded, and woken by their session’s events', () => {
  let iris: IrisSession;
  before(async () => {
    iris = await startStillIrisSession(unique('v'));
  });
  after(() => iris?.close());

  /** One QUEUED invocation of the session, and where its events start. */
  const appended = async () => {
    const [row] = await invocationState.appendQueued(iris.t.platform.db, [queuedPredict({ workspaceId: iris.owner.ws.id, sessionId: iris.sessionId, userId: iris.owner.user.id, modelId: iris.modelId })]);
    return { id: row!.id, from: parseSnapshot(row!.appended_in) };
  };
  const cancel = (id: string) => invocationState.cancel(iris.t.platform.db, iris.sessionId, [id]);
  /** Waits over readers told of changes by `feed` alone. */
  const waitsOn = (feed: ChangeFeed, draining = () => false, limits = { perWorkspace: 100, perProcess: 100 }) => {
    const readers = new SessionEventReaders(iris.t.platform.db, () => feed, LONG_MS);
    return { readers, waits: new PredictionWaits(readers, limits, draining) };
  };
  const listening = () => {
    const feed = new ChangeFeed();
    feed.setListening(true);
    return feed;
  };

  it('ends ten waits of one invocation on the announcement of its final status, with one read of the session for all of them', async () => {
    const feed = listening();
    const { readers, waits } = waitsOn(feed);
    const [target, other] = [await appended(), await appended()];
    const gone = new AbortController();
    const ends = Array.from({ length: 10 }, () => waits.until(iris.sessionId, target.from, target.id, LONG_MS, gone.signal));
    const otherEnd = waits.until(iris.sessionId, other.from, other.id, LONG_MS, gone.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readers.reads, 'the first read, shared').to.equal(1);
    expect(readers.sessions).to.equal(1);

    await cancel(target.id);
    feed.tableChanged('invocations', [iris.sessionId]);
    expect(await Promise.all(ends)).to.deep.equal(Array(10).fill('finished'));
    expect(readers.reads, 'one more read for the announcement').to.equal(2);

    gone.abort();
    expect(await otherEnd, 'another invocation’s wait, ended by its client only').to.equal('given_up');
    expect(readers.sessions, 'no reader left without a wait').to.equal(0);
    await cancel(other.id);
  });

  it('sees a final status committed before the wait began, from the snapshot of the append', async () => {
    const { waits } = waitsOn(listening());
    const { id, from } = await appended();
    await cancel(id);
    expect(await waits.until(iris.sessionId, from, id, LONG_MS, new AbortController().signal)).to.equal('finished');
  });

  it('gives up at its deadline, when its client leaves, and when the server drains', async () => {
    let draining = false;
    const { waits } = waitsOn(listening(), () => draining);
    const { id, from } = await appended();
    expect(await waits.until(iris.sessionId, from, id, 50, new AbortController().signal), 'the deadline').to.equal('given_up');
    const gone = new AbortController();
    const leaving = waits.until(iris.sessionId, from, id, LONG_MS, gone.signal);
    gone.abort();
    expect(await leaving, 'the client gone').to.equal('given_up');
    const drained = waits.until(iris.sessionId, from, id, LONG_MS, new AbortController().signal);
    draining = true;
    expect(await drained, 'the drain').to.equal('given_up');
    await cancel(id);
  });

  it('holds slots up to the workspace’s bound and the process’s, none while draining, and takes them back once', () => {
    let draining = false;
    const { waits } = waitsOn(listening(), () => draining, { perWorkspace: 2, perProcess: 3 });
    const [a1, a2, a3] = [waits.take(1), waits.take(1), waits.take(1)];
    expect([a1, a2, a3].map(Boolean), 'workspace 1 past its bound').to.deep.equal([true, true, false]);
    const b1 = waits.take(2);
    expect([Boolean(b1), Boolean(waits.take(2))], 'the process past its bound').to.deep.equal([true, false]);
    a1!();
    a1!();
    expect(waits.waiting, 'a slot given back once').to.equal(2);
    draining = true;
    expect(waits.take(3), 'none while draining').to.equal(undefined);
    a2!();
    b1!();
    expect(waits.waiting).to.equal(0);
  });
});
