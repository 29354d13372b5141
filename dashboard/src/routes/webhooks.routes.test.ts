import { expect } from 'chai';
import { PASSWORD, login, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../../test/support/platform.js';
import { DashboardClient } from '../../../test/support/dashboard-client.js';
import { colleague, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, upload } from '../../../test/support/fixtures.js';
import type { DeliveryStatus } from '../../../features/webhooks/deliveries.store.js';

describe('dashboard: an endpoint’s webhook deliveries', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  async function supervisorWithEndpoint() {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(user.email, PASSWORD, ws.name);
    const [endpoint] = (await t.platform.db('webhook_endpoints')
      .insert({ workspace_id: ws.id, url: 'http://127.0.0.1:1/hooks', events: JSON.stringify(['invocation.completed']), secret_sealed: 'sealed' })
      .returning('id')) as Array<{ id: number }>;
    return { ws, user, client, endpointId: endpoint!.id };
  }

  /** Deliveries of invocations #1…#count, a minute apart (the last the newest), never due: the deliverer leaves them be. */
  async function backlog(workspaceId: number, endpointId: number, count: number, statusOf: (n: number) => DeliveryStatus, sessionId = '11111111-1111-4111-8111-111111111111', version = '1.0') {
    const rows = Array.from({ length: count }, (_, i) => ({
      workspace_id: workspaceId,
      endpoint_id: endpointId,
      event_type: 'invocation.completed',
      status: statusOf(i + 1),
      payload: JSON.stringify({ type: 'invocation.completed', data: { invocation_id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`, session_id: sessionId, model_code: 'iris-classifier', model_version: version, order: i + 1 } }),
      next_attempt_at: t.platform.db.raw(`now() + interval '1 day'`),
      created_at: t.platform.db.raw(`now() - ? * interval '1 minute'`, [count - i]),
    }));
    await t.platform.db('webhook_deliveries').insert(rows);
  }

  const shownOrders = (text: string) => [...text.matchAll(/>Invocation #(\d+)</g)].map((m) => Number(m[1]));

  it('pages a backlog 20 at a time, newest first', async () => {
    const { ws, client, endpointId } = await supervisorWithEndpoint();
    await backlog(ws.id, endpointId, 45, () => 'delivered');

    const first = await client.get(`/dashboard/webhooks/${endpointId}`);
    expect(first.status).to.equal(200);
    expect(first.text).to.contain('45 deliveries in all, newest first, 20 a page.');
    expect(shownOrders(first.text)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 45 - i));
    expect(first.text).not.to.contain('Newest deliveries');

    const older = /href="(\/dashboard\/webhooks\/\d+\?after=[^"]+)">Older deliveries/.exec(first.text)![1]!;
    const second = await client.get(older.replaceAll('&amp;', '&'));
    expect(shownOrders(second.text)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 25 - i));
    expect(second.text).to.contain('Newest deliveries');
    const third = await client.get(/href="([^"]+)">Older deliveries/.exec(second.text)![1]!.replaceAll('&amp;', '&'));
    expect(shownOrders(third.text)).to.deep.equal([5, 4, 3, 2, 1]);
    expect(third.text).not.to.contain('Older deliveries');
  });

  it('links an invocation to its session’s page only when the session is the viewer’s own, a colleague’s by its id', async () => {
    const version = unique('v');
    const demo = await startDemoModelServer(version);
    try {
      const { ws, client, endpointId, user } = await supervisorWithEndpoint();
      const owner = { user, ws, token: (await login(t.auth, user, ws.name)).access };
      await demoDeployment(t.private, owner.token, demo.url);
      const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
      expect((await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id) })).status).to.equal(201);
      const sessionOf = async (token: string) =>
        ((await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token })).body as { id: string }).id;
      const own = await sessionOf(owner.token);
      const theirs = await sessionOf((await colleague(t, owner, 'user')).token);
      await backlog(ws.id, endpointId, 1, () => 'delivered', own, version);
      await backlog(ws.id, endpointId, 1, () => 'delivered', theirs, version);

      const page = (await client.get(`/dashboard/webhooks/${endpointId}`)).text;
      expect(page).to.contain(`href="/dashboard/sessions/iris-classifier/${version}/${own}#invocation-00000000-0000-4000-8000-000000000001"`);
      expect(page).not.to.contain(theirs);
      expect(shownOrders(page)).to.deep.equal([1, 1]);
    } finally {
      await demo.close();
    }
  });

  it('filters by status, keeping the filter from page to page', async () => {
    const { ws, client, endpointId } = await supervisorWithEndpoint();
    await backlog(ws.id, endpointId, 66, (n) => (n % 3 === 0 ? 'failed' : n % 3 === 1 ? 'delivered' : 'pending'));

    const failed = await client.get(`/dashboard/webhooks/${endpointId}?status=failed`);
    expect(failed.text).to.contain('22 failed deliveries in all');
    expect(failed.text).to.contain('<option value="failed" selected>');
    expect(shownOrders(failed.text)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 66 - 3 * i));
    const older = /href="([^"]+)">Older deliveries/.exec(failed.text)![1]!.replaceAll('&amp;', '&');
    expect(older).to.match(/[?&]status=failed(&|$)/);
    expect(shownOrders((await client.get(older)).text)).to.deep.equal([6, 3]);
  });

  it('answers 400 to a status that is none of pending, delivered and failed, and to a cursor it did not make', async () => {
    const { client, endpointId } = await supervisorWithEndpoint();
    const wrong = await client.get(`/dashboard/webhooks/${endpointId}?status=lost`);
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.contain('status: one of pending, delivered, failed, or blank for every status.');
    expect((await client.get(`/dashboard/webhooks/${endpointId}?after=not-a-cursor`)).status).to.equal(400);
  });

  it('shows another workspace’s endpoint to no one: 404', async () => {
    const { endpointId } = await supervisorWithEndpoint();
    const stranger = await supervisorWithEndpoint();
    expect((await stranger.client.get(`/dashboard/webhooks/${endpointId}?status=failed`)).status).to.equal(404);
  });
});
