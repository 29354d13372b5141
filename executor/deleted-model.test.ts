import { expect } from 'chai';
import { unique } from '../test/support/platform.js';
import { IRIS, queuedPredict, startIrisSession, type IrisSession } from '../test/support/fixtures.js';
import { startExecutor } from './start.js';
import { DELETED_BEFORE_RUN, invocationState } from '../features/invocations/state.js';
import { until } from '../test/support/until.js';
import { invocationsStore } from '../features/invocations/store.js';

describe('deleting a model: its queued work ends in a clear state and never runs', () => {
  let iris: IrisSession;
  const version = unique('v');
  before(async () => {
    iris = await startIrisSession(version);
  });
  after(() => iris.close());

  it('ends queued invocations in ERROR saying why, and an executor runs none of them', async () => {
    const { t, owner, sessionId, modelId } = iris;
    const base = `/api/model/iris-classifier/version/${version}`;
    // Queued before the deletion (no executor runs in this platform).
    const created = await t.public.post(`${base}/session/${sessionId}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(created.status).to.equal(201);
    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${version}`, { token: owner.token })).status).to.equal(204);
    expect(await invocationsStore.byId(t.platform.db, created.body.id as string)).to.include({ status: 'ERROR', error: DELETED_BEFORE_RUN });

    // Appended while the deletion committed: the executor ends it the same way, without calling the model.
    const [late] = await invocationState.appendQueued(t.platform.db, [queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId })]);
    const calls = () => t.platform.db('invocations').where({ model_id: modelId, status: 'COMPLETED' }).count('* as n').first();
    const before = await calls();
    const executor = await startExecutor(t.platform);
    try {
      t.platform.doorbell.ring();
      await until(async () => (await invocationsStore.byId(t.platform.db, late!.id))?.status === 'ERROR', 'the late invocation to end');
    } finally {
      await executor.close();
    }
    expect(await invocationsStore.byId(t.platform.db, late!.id)).to.include({ error: DELETED_BEFORE_RUN });
    expect(await calls()).to.deep.equal(before);
  });
});
