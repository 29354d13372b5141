import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { IRIS, startIrisPlatform, type IrisPlatform } from '../../test/support/fixtures.js';
import { until } from '../../test/support/until.js';
import { invocationsStore } from './store.js';

describe('restart on the in-process queue: queued work resumes within seconds', () => {
  let iris: IrisPlatform;
  let next: TestPlatform | undefined;
  const version = unique('v');

  before(async () => {
    iris = await startIrisPlatform(version);
  });
  after(async () => {
    await next?.close();
    await iris.close();
  });

  it('publishes again, at start, what an earlier run published into its in-process queue', async () => {
    const { t, owner } = iris;
    const base = `/api/model/iris-classifier/version/${version}`;
    const session = (await t.public.post(`${base}/session`, { token: owner.token })).body.id as string;
    const created = await t.public.post(`${base}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(created.status).to.equal(201);
    const id = created.body.id as string;
    // Published into this process's queue, which has no executor: then the process stops.
    await until(async () => Boolean((await invocationsStore.byId(t.platform.db, id))?.published_at), 'the publication');
    await t.platform.relay.stop();

    // The next run of the process: its queue receives the invocation again at start, and an executor would run it.
    next = await startTestPlatform({}, undefined, { resumeQueuedAtStart: true });
    const received = new Set<string>();
    const consumer = await next.platform.queue.consume(async (message) => void received.add(message), 100);
    try {
      await until(async () => received.has(id), 'the message in the next run');
    } finally {
      await consumer.stop();
    }
    expect((await invocationsStore.byId(next.platform.db, id))?.status).to.equal('QUEUED');
  });
});
