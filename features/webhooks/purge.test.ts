import { expect } from 'chai';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { tenant } from '../../test/support/fixtures.js';
import { webhookDeliveriesStore } from './deliveries.store.js';

describe('the purge of webhook deliveries', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
    await t.platform.deliverer.stop();
  });
  after(() => t?.close());

  it('removes finished deliveries created before the cutoff, with their attempts, and keeps pending ones', async () => {
    const owner = await tenant(t);
    const reply = await t.private.post('/api/webhook', { token: owner.token, json: { url: 'http://127.0.0.1:1/hook', events: ['dataset.exported'] } });
    const db = t.platform.db;
    for (let i = 0; i < 3; i++) await t.platform.services.webhooks.queueDatasetExported(db, owner.ws.id, { id: `dataset-${i}` });
    const [delivered, failed, pending] = (await db('webhook_deliveries').where({ endpoint_id: reply.body.id }).orderBy('payload')) as Array<{ id: string }>;
    const old = new Date(Date.now() - 3_600_000);
    await db('webhook_deliveries').whereIn('id', [delivered!.id, failed!.id, pending!.id]).update({ created_at: old });
    await db('webhook_deliveries').where({ id: delivered!.id }).update({ status: 'delivered' });
    await db('webhook_deliveries').where({ id: failed!.id }).update({ status: 'failed' });
    // Ignored when a deliverer of another platform on this process's shared database recorded a first attempt already.
    await db('webhook_attempts').insert({ delivery_id: failed!.id, attempt: 1, started_at: old, duration_ms: 1, error: 'x' }).onConflict(['delivery_id', 'attempt']).ignore();

    const cutoff = new Date(Date.now() - 60_000);
    expect(await webhookDeliveriesStore.removeFinishedBefore(db, cutoff, 1)).to.equal(1);
    // Other suites on the shared database may have left finished deliveries before the cutoff too.
    while ((await webhookDeliveriesStore.removeFinishedBefore(db, cutoff, 10)) > 0);
    const left = (await db('webhook_deliveries').where({ endpoint_id: reply.body.id })) as Array<{ id: string }>;
    expect(left.map((row) => row.id)).to.deep.equal([pending!.id]);
    expect(await db('webhook_attempts').where({ delivery_id: failed!.id })).to.deep.equal([]);
  });
});
