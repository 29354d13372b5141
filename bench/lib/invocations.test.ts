import { expect } from 'chai';
import { unique } from '../../test/support/platform.js';
import { queuedPredict, startIrisPlatform, type IrisPlatform } from '../../test/support/fixtures.js';
import { invocationState } from '../../features/invocations/state.js';
import { completedBetween, nextPollMs, openCount, throughput } from './invocations.js';

describe('bench: waiting for invocations to finish', () => {
  it('polls again in half the time the open invocations would take at the rate just seen', () => {
    // 1,000 finished in 1 s, 4,000 open: 4 s to go, the next count in 2 s.
    expect(nextPollMs({ open: 5000, at: 0 }, { open: 4000, at: 1000 })).to.equal(2000);
    // 100 open at the same rate: 100 ms to go, counted again after 100 ms.
    expect(nextPollMs({ open: 1100, at: 0 }, { open: 100, at: 1000 })).to.equal(100);
    expect(nextPollMs({ open: 1500, at: 0 }, { open: 500, at: 1000 })).to.equal(250);
  });

  it('polls at the shortest pause first, and while nothing finishes', () => {
    expect(nextPollMs(undefined, { open: 5000, at: 0 })).to.equal(100);
    expect(nextPollMs({ open: 5000, at: 0 }, { open: 5000, at: 1000 })).to.equal(100);
    expect(nextPollMs({ open: 10, at: 0 }, { open: 12, at: 1000 })).to.equal(100);
  });

  it('never waits longer than 2 s, however slow the drain', () => {
    expect(nextPollMs({ open: 100_000, at: 0 }, { open: 99_999, at: 1000 })).to.equal(2000);
  });
});

describe('bench: throughput from the invocations’ own timestamps', () => {
  let iris: IrisPlatform;
  let sessionId: string;
  const version = unique('v');
  const zero = Date.parse('2026-01-01T00:00:00Z');

  before(async () => {
    iris = await startIrisPlatform(version);
    const { t, owner } = iris;
    sessionId = (await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: owner.token })).body.id as string;
    // Started at second 0; one completes per second from 1 to 10, one fails.
    const rows = Array.from({ length: 11 }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId: iris.modelId }));
    await invocationState.appendQueued(t.platform.db, rows);
    for (const [index, row] of rows.entries()) {
      const failed = index === 10;
      await t.platform.db('invocations').where({ id: row.id }).update({
        status: failed ? 'ERROR' : 'COMPLETED',
        started_at: new Date(zero),
        completed_at: new Date(zero + (failed ? 500 : (index + 1) * 1000)),
      });
    }
  });
  after(() => iris.close());

  it('counts every completion from the first start to the last completion', async () => {
    const all = await throughput(iris.t.platform.db, [sessionId], 'started_at');
    expect(all).to.include({ completed: 10, failed: 1, seconds: 10, rps: 1 });
  });

  it('counts the completions inside a window, its start in and its end out, failures not', async () => {
    const between = (from: number, to: number) => completedBetween(iris.t.platform.db, [sessionId], new Date(zero + from * 1000), new Date(zero + to * 1000));
    expect(await between(4, 7)).to.equal(3); // at 4, 5 and 6
    expect(await between(0, 1)).to.equal(0); // the failure at 0.5 does not count
    expect(await between(10, 11)).to.equal(1);
  });
});

describe('bench: counting the open invocations of sessions', () => {
  let iris: IrisPlatform;
  const version = unique('v');
  after(() => iris?.close());

  it('counts the QUEUED and IN_PROGRESS invocations of the sessions named, not the finished ones or other sessions’', async () => {
    iris = await startIrisPlatform(version);
    const { t, owner } = iris;
    const session = async () => (await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: owner.token })).body.id as string;
    const [mine, other] = [await session(), await session()];
    const rows = (sessionId: string, n: number) => Array.from({ length: n }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId: iris.modelId }));
    const [queued, running, done] = [rows(mine, 3), rows(mine, 2), rows(mine, 4)];
    await invocationState.appendQueued(t.platform.db, [...queued, ...running, ...done, ...rows(other, 5)]);
    await t.platform.db('invocations').whereIn('id', running.map((r) => r.id)).update({ status: 'IN_PROGRESS', lease_expires_at: new Date(Date.now() + 60_000) });
    await t.platform.db('invocations').whereIn('id', done.map((r) => r.id)).update({ status: 'COMPLETED', completed_at: new Date() });
    expect(await openCount(t.platform.db, [mine])).to.equal(5);
    expect(await openCount(t.platform.db, [mine, other])).to.equal(10);
  });
});
