import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../test/support/platform.js';
import { IRIS, startIrisPlatform, type IrisPlatform } from '../test/support/fixtures.js';
import { until } from '../test/support/until.js';
import { startExecutor } from './start.js';
import { invocationsStore } from '../features/invocations/store.js';

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

  it("runs what an earlier run queued, though that run's wake-up died with its process", async () => {
    const { t, owner } = iris;
    const base = `/api/model/iris-classifier/version/${version}`;
    const session = (await t.public.post(`${base}/session`, { token: owner.token })).body.id as string;
    const created = await t.public.post(`${base}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(created.status).to.equal(201);
    const id = created.body.id as string;

    // The next run of the process, with a new in-process queue that never heard of it: its executor claims at start.
    next = await startTestPlatform();
    const executor = await startExecutor(next.platform);
    try {
      await until(async () => (await invocationsStore.byId(next!.platform.db, id))?.status === 'COMPLETED', 'the invocation to run');
    } finally {
      await executor.close();
    }
  });
});
