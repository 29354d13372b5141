import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { unique } from '../test/support/platform.js';
import { queuedPredict, startIrisSession, type IrisSession } from '../test/support/fixtures.js';
import { invocationsStore, type InvocationRow } from '../core/invocations/store.js';
import { BEFORE_COMMIT, OutboxRelay, relayScans } from '../core/invocations/relay.js';
import { MemoryQueue } from '../core/queue/memory.js';
import type { WorkQueue } from '../core/queue/queue.js';
import { createLogger } from '../core/logging/logger.js';
import { RunWrites } from './claims.js';
import { Executor, type InferenceInput } from './executor.js';

// An invocation's message may leave before its append commits
// (OutboxRelay.dispatchBeforeCommit): the executor waits a moment for the row,
// and the publisher marks the row published only when that wait covered the commit.
describe('invocations published before their commit', () => {
  let iris: IrisSession;
  const relayOptions = { batchSize: 10, pollMs: 60_000, republishAfterMs: 600_000, dispatchGraceMs: 2000 };

  before(async () => {
    iris = await startIrisSession(unique('v'));
  });
  after(() => iris.close());

  const db = () => iris.t.platform.db;
  const queued = () => queuedPredict({ workspaceId: iris.owner.ws.id, sessionId: iris.sessionId, userId: iris.owner.user.id, modelId: iris.modelId });
  const append = async (row = queued()) => (await invocationsStore.appendAllToOpenSessions(db(), [row]))[0]!;
  const stored = async (id: string) => (await invocationsStore.byId(db(), id)) as InvocationRow;

  /**
   * Runs `test` against an executor on its own in-process queue, whose model
   * calls are counted (and answered without a model server); stops it whatever
   * happens, and gives back the queue and the calls.
   */
  async function withExecutor(test: (queue: MemoryQueue, calls: InferenceInput[]) => Promise<void>) {
    const queue = new MemoryQueue();
    const calls: InferenceInput[] = [];
    const executor = new Executor({
      db: db(),
      uploads: iris.t.platform.services.uploads,
      queue,
      relay: new OutboxRelay(db(), queue, createLogger('silent'), relayOptions),
      logger: createLogger('silent'),
      resolveProxy: async () => ({
        infer: async (input: InferenceInput) => {
          calls.push(input);
          return { response: '{"outputs":[]}' };
        },
      }),
      options: { concurrency: 2, leaseMs: 30_000, retryBackoffMs: 10 },
    });
    await executor.start();
    try {
      await test(queue, calls);
    } finally {
      await executor.stop();
    }
    return { queue, calls };
  }

  async function until(check: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (await check()) return;
    throw new Error(`timed out waiting for ${what}`);
  }

  it("tells a claim of an id without a row ('absent') from one of a finished row (nothing to run)", async () => {
    const writes = new RunWrites(db(), 60_000);
    const row = await append();
    await db()('invocations').where({ id: row.id }).update({ status: 'COMPLETED' });
    const [missing, finished] = await Promise.all([writes.claim(queued().id), writes.claim(row.id)]);
    expect(missing).to.equal('absent');
    expect(finished).to.equal(undefined);
  });

  it('runs, once, an invocation whose message arrived before its row was committed', () =>
    withExecutor(async (queue, calls) => {
      const row = queued();
      await queue.publish([row.id]);
      await sleep(30); // the executor has looked and found nothing
      await append(row);
      await until(async () => (await stored(row.id)).status === 'COMPLETED', 'the invocation to complete');
      expect(calls).to.have.length(1);
      expect((await stored(row.id)).attempts).to.equal(1);
    }));

  it('drops, after a bounded wait and without a model call, a message whose append never committed', async () => {
    const orphan = queued();
    const started = Date.now();
    const { queue, calls } = await withExecutor(async (queue) => {
      await queue.publish([orphan.id]);
      const follower = await append();
      await queue.publish([follower.id]);
      await until(async () => (await stored(follower.id)).status === 'COMPLETED', 'the next invocation to complete');
    });
    // Stopping waited for the orphan's handler: acknowledged after the wait, not requeued.
    expect(Date.now() - started).to.be.at.least(BEFORE_COMMIT.rowWaitMs);
    expect(calls).to.have.length(1);
    expect(queue.deadLetters).to.deep.equal([]);
    expect(await invocationsStore.byId(db(), orphan.id)).to.equal(undefined);
  });

  describe('the publisher marks a row published only when its append came back within the executor wait', () => {
    for (const { delayMs, marked } of [
      { delayMs: 0, marked: true },
      { delayMs: BEFORE_COMMIT.markWithinMs + 20, marked: false },
    ]) {
      it(`append back ${delayMs} ms late: ${marked ? 'marked' : 'left to a relay pass'}`, async () => {
        const relay = new OutboxRelay(db(), new MemoryQueue(), createLogger('silent'), relayOptions);
        const row = queued();
        const dispatch = relay.dispatchBeforeCommit(row.id);
        await sleep(delayMs);
        await append(row);
        dispatch.committed();
        await sleep(10);
        await relay.stop(); // runs the marks gathered
        expect((await stored(row.id)).published_at instanceof Date).to.equal(marked);
      });
    }

    it('an unconfirmed publish: not marked, so a relay pass publishes the row again', async () => {
      const refusing: WorkQueue = Object.assign(new MemoryQueue(), { publish: async () => Promise.reject(new Error('broker down')) });
      const relay = new OutboxRelay(db(), refusing, createLogger('silent'), relayOptions);
      const row = queued();
      const dispatch = relay.dispatchBeforeCommit(row.id);
      await append(row);
      dispatch.committed();
      await sleep(10);
      await relay.stop();
      expect((await stored(row.id)).published_at).to.equal(null);
      expect((await relayScans.unpublished(db(), 0).select('id')).map((found: { id: string }) => found.id)).to.include(row.id);
    });

    it('keeps the executor wait at least twice the publisher window', () => {
      expect(BEFORE_COMMIT.rowWaitMs).to.be.at.least(2 * BEFORE_COMMIT.markWithinMs);
    });
  });
});
