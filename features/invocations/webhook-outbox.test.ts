import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { queuedPredict, startStillIrisSession, tenant, type IrisSession } from '../../test/support/fixtures.js';
import { until } from '../../test/support/until.js';
import { startOwnService, type OwnService } from '../../test/support/own-service.js';
import { invocationState } from './state.js';
import { REFUSED_BY_POLICY } from '../../infra/net/delivery-client.js';

describe('webhook outbox: written with the state change, sent by the deliverer only', () => {
  describe('deliveries of an invocation’s outcome', () => {
    let iris: IrisSession;
    let endpointId: number;
    before(async () => {
      iris = await startStillIrisSession(unique('v'));
      // Only the writes under test move rows: nothing is sent.
      await iris.t.platform.deliverer.stop();
      const reply = await iris.t.private.post('/api/webhook', { token: iris.owner.token, json: { url: 'http://127.0.0.1:1/hook', events: ['invocation.cancelled', 'invocation.completed'] } });
      expect(reply.status, reply.text).to.equal(201);
      endpointId = reply.body.id;
    });
    after(async () => {
      await iris?.close();
    });

    const append = async () => {
      const [row] = await invocationState.appendQueued(iris.t.platform.db, [queuedPredict({ workspaceId: iris.owner.ws.id, sessionId: iris.sessionId, userId: iris.owner.user.id, modelId: iris.modelId })]);
      return row!.id;
    };
    const deliveriesOf = async (invocationId: string) =>
      (await iris.t.platform.db('webhook_deliveries').where({ endpoint_id: endpointId })).filter((row: { payload: string }) => JSON.parse(row.payload).data.invocation_id === invocationId);

    it('commits a delivery with the status change, and a rolled-back change leaves none', async () => {
      const db = iris.t.platform.db;
      const id = await append();
      const trx = await db.transaction();
      await invocationState.cancel(trx, iris.sessionId, [id]);
      expect((await trx('webhook_deliveries').where({ endpoint_id: endpointId })).length, 'seen inside the transaction').to.equal(1);
      await trx.rollback();
      expect(await deliveriesOf(id), 'nothing after the rollback').to.deep.equal([]);

      await invocationState.cancel(db, iris.sessionId, [id]);
      const [delivery] = await deliveriesOf(id);
      expect(delivery).to.include({ status: 'pending', event_type: 'invocation.cancelled', attempts: 0 });
      expect(JSON.parse(delivery.payload)).to.deep.include({ type: 'invocation.cancelled' });
    });

    it('queues nothing for a status that is not an outcome, nor for an event type the endpoint did not ask for', async () => {
      const id = await append();
      expect(await deliveriesOf(id), 'QUEUED is no outcome').to.deep.equal([]);
      await iris.t.private.patch(`/api/webhook/${endpointId}`, { token: iris.owner.token, json: { events: ['invocation.completed'] } });
      await invocationState.cancel(iris.t.platform.db, iris.sessionId, [id]);
      expect(await deliveriesOf(id)).to.deep.equal([]);
    });
  });

  describe('the outbound URL policy', () => {
    let t: TestPlatform;
    let own: OwnService;
    before(async () => {
      own = await startOwnService();
      t = await startTestPlatform({ prometheusUrl: own.url, webhookRetrySchedule: [100], webhookPollMs: 50 });
    });
    after(async () => {
      await t?.close();
      await own.close();
    });

    it('fails a delivery to an address it refuses, after DNS, with the reason recorded, and never sends it', async () => {
      const owner = await tenant(t);
      const reply = await t.private.post('/api/webhook', { token: owner.token, json: { url: `${own.url}/hook`, events: ['dataset.exported'] } });
      expect(reply.status, reply.text).to.equal(201);
      await t.platform.services.webhooks.queueDatasetExported(t.platform.db, owner.ws.id, { id: 'dataset-1' });
      const list = async () => (await t.private.get(`/api/webhook/${reply.body.id}/delivery`, { token: owner.token })).body;
      await until(async () => (await list())[0]?.status === 'failed', 'the delivery to fail');
      const [delivery] = await list();
      expect(delivery.attempts).to.have.length(2);
      for (const attempt of delivery.attempts) {
        expect(attempt).to.include({ status_code: null, response: null });
        expect(attempt.error).to.equal(REFUSED_BY_POLICY);
      }
      expect(delivery.last_error).to.equal(delivery.attempts[1].error);
      expect(own.requests).to.equal(0);
    });
  });
});
