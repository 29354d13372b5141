import { expect } from 'chai';
import { pino } from 'pino';
import { unique } from '../test/support/platform.js';
import { queuedPredict, startIrisSession, type IrisSession } from '../test/support/fixtures.js';
import { invocationState } from '../features/invocations/state.js';
import { invocationsStore } from '../features/invocations/store.js';
import type { Listener, Ring, WorkQueue } from '../infra/queue/queue.js';
import { Executor, type InferenceProxy } from './executor.js';
import { until } from '../test/support/until.js';

/** A broker that loses every wake-up, and keeps what was sent to it and the listener it was given. */
class LosingQueue implements Pick<WorkQueue, 'listen' | 'ring'> {
  readonly sent: Ring[] = [];
  deliver: (ring: Ring) => void = () => undefined;

  ring(ring: Ring): void {
    this.sent.push(ring);
  }

  async listen(onRing: (ring: Ring) => void): Promise<Listener> {
    this.deliver = onRing;
    return { stop: async () => undefined };
  }
}

describe('executor wake-ups: the broker only wakes, the table says what runs', () => {
  let iris: IrisSession;
  before(async () => {
    iris = await startIrisSession(unique('v'));
    await iris.t.platform.sweeper.stop();
  });
  after(() => iris.close());

  const proxy: InferenceProxy = { infer: async () => ({ response: '{"ok":true}' }) };
  const executorOn = (queue: LosingQueue, concurrency: number) =>
    new Executor({
      db: iris.t.platform.db,
      uploads: iris.t.platform.services.uploads,
      queue,
      doorbell: { ring: () => undefined },
      logger: pino({ level: 'silent' }),
      resolveProxy: async () => proxy,
      options: { concurrency, leaseMs: 60_000, pollMs: 100, retryBackoffMs: 10, context: { maxInvocations: 50, maxBytes: 4194304 } },
    });

  async function queue(count: number): Promise<string[]> {
    const { t, owner, modelId, sessionId } = iris;
    const rows = Array.from({ length: count }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }));
    return (await invocationState.appendQueued(t.platform.db, rows)).map((row) => row!.id);
  }

  const statuses = async (ids: string[]) => (await Promise.all(ids.map((id) => invocationsStore.byId(iris.t.platform.db, id)))).map((row) => row!.status);

  it('runs work whose every wake-up was lost: the poll finds it, and the runners it wakes fan out to the rest', async () => {
    const broker = new LosingQueue();
    const executor = executorOn(broker, 4);
    await executor.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50)); // every runner idle: its first claim found nothing
      const ids = await queue(40);
      await until(async () => (await statuses(ids)).every((status) => status === 'COMPLETED'), 'every invocation to run without a wake-up');
    } finally {
      await executor.stop();
    }
  });

  it('wakes as many idle runners as a wake-up counts, and passes on, a few hops at most, what it had none for', async () => {
    const broker = new LosingQueue();
    const executor = executorOn(broker, 1); // two runners
    await executor.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      broker.deliver({ count: 5, hops: 0 });
      expect(broker.sent).to.deep.equal([{ count: 3, hops: 1 }]);
      broker.deliver({ count: 4, hops: 2 }); // both runners already woken, and the last hop
      expect(broker.sent).to.have.length(1);
    } finally {
      await executor.stop();
    }
  });

  it('stops with its runs finished and its idle runners gone, claiming nothing after', async () => {
    const broker = new LosingQueue();
    const executor = executorOn(broker, 2);
    await executor.start();
    await executor.stop();
    const [id] = await queue(1);
    await new Promise((resolve) => setTimeout(resolve, 300)); // three polls' worth
    expect(await statuses([id!])).to.deep.equal(['QUEUED']);
    await iris.t.platform.db('invocations').where({ id }).delete();
  });
});
