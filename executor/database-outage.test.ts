import { expect } from 'chai';
import { unique } from '../test/support/platform.js';
import { IRIS, startIrisSession, type IrisSession } from '../test/support/fixtures.js';
import { until } from '../test/support/until.js';
import { invocationsStore } from '../features/invocations/store.js';
import { startExecutor } from './start.js';

describe('an executor whose database drops a connection before the model call', () => {
  let iris: IrisSession;
  const version = unique('v');
  before(async () => {
    iris = await startIrisSession(version);
  });
  after(() => iris.close());

  it('waits the outage out and completes the invocation instead of failing it', async () => {
    const { t, owner, sessionId } = iris;
    const { proxies } = t.platform;
    const resolve = proxies.resolve.bind(proxies);
    let dropped = 0;
    // The first lookup meets a connection PostgreSQL closed on restart, as a pool does right after one.
    proxies.resolve = async (model) => {
      if (dropped++ === 0) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
      return resolve(model);
    };
    const executor = await startExecutor(t.platform);
    try {
      const base = `/api/model/iris-classifier/version/${version}`;
      const created = await t.public.post(`${base}/session/${sessionId}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      expect(created.status).to.equal(201);
      const id = created.body.id as string;
      await until(async () => ['COMPLETED', 'ERROR'].includes((await invocationsStore.byId(t.platform.db, id))!.status), 'the invocation to finish');
      expect(await invocationsStore.byId(t.platform.db, id)).to.include({ status: 'COMPLETED', error: null });
      expect(dropped, 'proxy lookups: the dropped one and its retry').to.equal(2);
    } finally {
      await executor.close();
      proxies.resolve = resolve;
    }
  });
});
