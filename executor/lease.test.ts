import { expect } from 'chai';
import { pino } from 'pino';
import { unique } from '../test/support/platform.js';
import { queuedPredict, startIrisSession, type IrisSession } from '../test/support/fixtures.js';
import { invocationState } from '../features/invocations/state.js';
import { invocationsStore } from '../features/invocations/store.js';
import { MemoryQueue } from '../infra/queue/memory.js';
import { Executor, type InferenceProxy } from './executor.js';
import { until } from '../test/support/until.js';

describe('executor leases: a run whose lease was lost never has its result taken', () => {
  let iris: IrisSession;
  before(async () => {
    iris = await startIrisSession(unique('v'));
  });
  after(() => iris.close());

  /** An executor whose model calls wait for `release`, with a lease of `leaseMs`; warnings are kept. */
  function executorWith(leaseMs: number) {
    const warnings: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const proxy: InferenceProxy = { infer: async () => (await released, { response: '{"late":true}' }) };
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg as string) });
    const executor = new Executor({
      db: iris.t.platform.db,
      uploads: iris.t.platform.services.uploads,
      queue: new MemoryQueue(),
      doorbell: iris.t.platform.doorbell,
      logger,
      resolveProxy: async () => proxy,
      options: { concurrency: 1, leaseMs, pollMs: 60_000, retryBackoffMs: 10, context: { maxInvocations: 50, maxBytes: 4194304 } },
    });
    return { executor, warnings, release };
  }

  async function queued(): Promise<string> {
    const { t, owner, modelId, sessionId } = iris;
    const [row] = await invocationState.appendQueued(t.platform.db, [queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId })]);
    return row!.id;
  }

  const stored = async (id: string) => (await invocationsStore.byId(iris.t.platform.db, id))!;

  it('refuses the result of a run taken over meanwhile, and logs it', async () => {
    const { executor, warnings, release } = executorWith(60_000);
    const id = await queued();
    await executor.start();
    await until(async () => (await stored(id)).status === 'IN_PROGRESS', 'the claim');
    // Another worker's claim after this lease ran out: the next lease.
    await iris.t.platform.db('invocations').where({ id }).update({ lease_expires_at: new Date(Date.now() - 1) });
    await invocationState.expireLeases(iris.t.platform.db);
    const takeover = await invocationState.claimNext(iris.t.platform.db, 10, 60_000, 'takeover');
    expect(takeover.rows.find((row) => row.id === id)?.attempts).to.equal(2);
    release();
    await until(async () => warnings.includes('result refused: the lease was lost to another worker'), 'the refusal');
    await executor.stop();
    expect(await stored(id)).to.include({ status: 'IN_PROGRESS', attempts: 2, response: '' });
  });

  it('renews the lease while the model runs, so a live worker keeps its run past the first lease', async () => {
    // Short enough to renew within a second, long enough that a loaded machine's sweeper does not take the run between renewals.
    const { executor, release } = executorWith(1_500);
    const id = await queued();
    await executor.start();
    await until(async () => (await stored(id)).status === 'IN_PROGRESS', 'the claim');
    const first = (await stored(id)).lease_expires_at!.getTime();
    await until(async () => (await stored(id)).lease_expires_at!.getTime() > first, 'a renewal');
    release();
    await until(async () => (await stored(id)).status === 'COMPLETED', 'the completion');
    await executor.stop();
    expect(await stored(id)).to.include({ status: 'COMPLETED', attempts: 1 });
  });
});
