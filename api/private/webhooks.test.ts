import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { colleague, filesystemStorage, IRIS, tenant as newTenant, type Tenant } from '../../test/support/fixtures.js';
import { floodPlatform, type FloodTenant } from '../../test/support/flood.js';
import { until } from '../../test/support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { startTestPlatform } from '../../test/support/platform.js';
import { webhookEndpointCap, webhookWorkspaceCap } from '../../kernel/config/config.js';

// Completion webhooks end to end: a supervisor's endpoint, an invocation that
// finishes, the deliverer's signed POSTs, retries while the receiver is away,
// and what the API shows of it. The retry schedule is short so the test is.

describe('webhooks: endpoints, signed deliveries, retries and redelivery', function () {
  this.timeout(120_000);
  const platform = floodPlatform({ webhookRetrySchedule: [200, 400, 800, 1600, 3200, 6400], webhookPollMs: 50 });
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(() => receiver.close());

  const events = ['invocation.completed', 'invocation.failed', 'invocation.cancelled'];
  async function endpoint(owner: Tenant, url = `${receiver.url}/hooks`, body: Record<string, unknown> = {}) {
    const reply = await platform.t.private.post('/api/webhook', { token: owner.token, json: { url, events, ...body } });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body as { id: number; secret: string; url: string };
  }
  const deliveries = async (owner: Tenant, id: number, query = '') => {
    const reply = await platform.t.private.get(`/api/webhook/${id}/delivery${query}`, { token: owner.token });
    expect(reply.status, reply.text).to.equal(200);
    return reply;
  };
  const allDelivered = async (owner: Tenant, id: number, count: number) => {
    const list = (await deliveries(owner, id)).body as Array<{ status: string }>;
    return list.length === count && list.every((delivery) => delivery.status === 'delivered');
  };
  const invocationPath = (tenant: FloodTenant) => `/api/model/iris-classifier/version/${tenant.version}/session/${tenant.sessionId}/invocation`;

  it('POSTs an invocation’s outcome signed as Standard Webhooks, which the reference implementation verifies', async () => {
    const tenant = await platform.tenant(0);
    const hook = await endpoint(tenant);
    const [id] = await tenant.invoke(1);
    await until(async () => receiver.received.length === 1, 'the delivery');
    const [request] = receiver.received;
    expect(request!.path).to.equal('/hooks');
    const verified = new Webhook(hook.secret).verify(request!.body, request!.headers) as { type: string; data: Record<string, unknown> };
    expect(verified.type).to.equal('invocation.completed');
    expect(verified.data).to.include({ invocation_id: id, session_id: tenant.sessionId, status: 'COMPLETED', type: 'PREDICT', model_code: 'iris-classifier', model_version: tenant.version, workspace: tenant.ws.name });
    await until(() => allDelivered(tenant, hook.id, 1), 'the delivery to be recorded');
    const [delivery] = (await deliveries(tenant, hook.id)).body;
    expect(delivery).to.include({ id: request!.headers['webhook-id'], status: 'delivered', event_type: 'invocation.completed', url: `${receiver.url}/hooks`, attempt_count: 1, last_status_code: 200 });
    expect(delivery.attempts).to.have.length(1);
    expect(delivery.attempts[0]).to.include({ attempt: 1, status_code: 200, error: null, response: '{"ok":true}' });
    const metrics = await platform.t.public.get('/metrics');
    expect(metrics.text).to.match(/^didyma_webhook_attempts_total\{outcome="delivered"\} [1-9]/m);
    expect(metrics.text).to.match(/^didyma_webhook_delivery_seconds_count [1-9]/m);
  });

  it('POSTs dataset.exported, with the dataset as the API shows it, when a closed session is exported', async () => {
    const tenant = await platform.tenant(0);
    const hook = await endpoint(tenant, `${receiver.url}/hooks`, { events: ['dataset.exported'] });
    const storage = await filesystemStorage(platform.t.private, tenant.token);
    await tenant.invoke(1);
    await until(async () => (await tenant.statuses()).COMPLETED === 1, 'the invocation');
    const session = `/api/model/iris-classifier/version/${tenant.version}/session/${tenant.sessionId}`;
    expect((await platform.t.public.patch(`${session}?state=CLOSED`, { token: tenant.token })).status).to.equal(200);
    const exported = await platform.t.public.post(`${session}/dataset`, { token: tenant.token, json: { storage_key: storage } });
    expect(exported.status, exported.text).to.equal(201);
    await until(async () => receiver.received.length === 1, 'the delivery');
    const verified = new Webhook(hook.secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers) as { type: string; data: unknown };
    expect(verified).to.deep.include({ type: 'dataset.exported', data: exported.body });
  });

  it('rides out a receiver that refuses connections, then answers 503, then recovers: every event accepted exactly once', async () => {
    const tenant = await platform.tenant(0);
    const hook = await endpoint(tenant);
    await receiver.refuse();
    const ids = await tenant.invoke(5);
    await until(async () => (await platform.t.platform.db('webhook_attempts').join('webhook_deliveries as d', 'd.id', 'delivery_id').where('d.endpoint_id', hook.id).countDistinct({ n: 'delivery_id' }))[0]!.n == 5, 'a refused attempt of each');
    await receiver.fail(503);
    await until(async () => receiver.received.length > 0, 'an attempt answered 503');
    await receiver.accept();
    await until(() => allDelivered(tenant, hook.id, 5), 'every delivery', 30_000);

    const accepted = receiver.accepted();
    expect([...accepted.values()], 'each webhook-id accepted once').to.deep.equal([1, 1, 1, 1, 1]);
    const list = (await deliveries(tenant, hook.id)).body as Array<{ id: string; payload: { data: { invocation_id: string } }; attempts: Array<{ error: string | null; status_code: number | null }> }>;
    expect(new Set(list.map((delivery) => delivery.id))).to.deep.equal(new Set(accepted.keys()));
    expect(new Set(list.map((delivery) => delivery.payload.data.invocation_id))).to.deep.equal(new Set(ids));
    for (const delivery of list) {
      expect(delivery.attempts.length).to.be.at.least(2);
      expect(delivery.attempts[0]).to.include({ status_code: null, error: 'The receiver failed: connection refused' });
      expect(delivery.attempts.at(-1)).to.include({ status_code: 200, error: null });
    }
    expect(list.flatMap((delivery) => delivery.attempts).some((attempt) => attempt.status_code === 503 && attempt.error === 'The receiver answered HTTP 503.')).to.equal(true);
  });

  it('keeps a slow receiver with a backlog to half of the deliverer’s slots: another endpoint of its workspace delivers meanwhile', async () => {
    const tenant = await platform.tenant(0);
    const slowHook = await endpoint(tenant, `${receiver.url}/slow`, { events: ['dataset.exported'] });
    receiver.delay(3000);
    const other = await startWebhookReceiver();
    try {
      await endpoint(tenant, `${other.url}/fast`, { events: ['invocation.completed'] });
      const half = webhookEndpointCap(platform.t.platform.config);
      expect(half, 'fewer than the workspace may have in flight').to.be.below(webhookWorkspaceCap(platform.t.platform.config));
      for (let i = 0; i < 3 * half; i++) await platform.t.platform.services.webhooks.queueDatasetExported(platform.t.platform.db, tenant.ws.id, { id: `slow-${i}` });
      await until(async () => receiver.pending() === half, 'the slow receiver to hold half of the slots');
      await tenant.invoke(1);
      await until(async () => other.received.length === 1, 'the other endpoint’s delivery', 5000);
      expect(receiver.pending(), 'still held by the slow receiver').to.equal(half);
      expect(receiver.received.length).to.equal(0);
    } finally {
      await other.close();
      await platform.t.private.delete(`/api/webhook/${slowHook.id}`, { token: tenant.token });
    }
  });

  it('sends each delivery once when two processes deliver from the same outbox', async () => {
    const second = await startTestPlatform({ webhookPollMs: 50 });
    try {
      const owner = await newTenant(platform.t);
      const hook = await endpoint(owner, `${receiver.url}/hooks`, { events: ['dataset.exported'] });
      receiver.delay(20);
      for (let i = 0; i < 40; i++) await platform.t.platform.services.webhooks.queueDatasetExported(platform.t.platform.db, owner.ws.id, { id: `d${i}` });
      await until(async () => (await deliveries(owner, hook.id, '?status=delivered')).headers.get('x-total-count') === '40', 'every delivery', 30_000);
      expect([...receiver.accepted().values()]).to.have.length(40).and.to.satisfy((counts: number[]) => counts.every((n) => n === 1));
      const list = (await deliveries(owner, hook.id)).body as Array<{ attempt_count: number }>;
      expect(list.every((delivery) => delivery.attempt_count === 1)).to.equal(true);
      const sentBySecond = await second.platform.metrics.webhooks.registry.getSingleMetricAsString('didyma_webhook_attempts_total');
      expect(sentBySecond, 'the second process took its share').to.match(/outcome="delivered"\} [1-9]/);
    } finally {
      await second.close();
    }
  });

  it('redelivers with the same webhook-id, keeping the earlier attempts; lists page by cursor', async () => {
    const tenant = await platform.tenant(0);
    const hook = await endpoint(tenant);
    await tenant.invoke(3);
    await until(() => allDelivered(tenant, hook.id, 3), 'three deliveries');

    const first = await deliveries(tenant, hook.id, '?limit=2');
    expect(first.headers.get('x-total-count')).to.equal('3');
    expect(first.body).to.have.length(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).to.be.a('string');
    const second = await platform.t.private.get(next!, { token: tenant.token });
    expect(second.body).to.have.length(1);
    const chosen = second.body[0] as { id: string };

    const reply = await platform.t.private.post(`/api/webhook/${hook.id}/delivery/${chosen.id}/redeliver`, { token: tenant.token });
    expect(reply.status, reply.text).to.equal(202);
    expect(reply.body).to.include({ id: chosen.id, status: 'pending' });
    const delivery = async () => (await platform.t.private.get(`/api/webhook/${hook.id}/delivery/${chosen.id}`, { token: tenant.token })).body;
    await until(async () => (await delivery()).status === 'delivered', 'the redelivery');
    expect(receiver.accepted().get(chosen.id)).to.equal(2);
    const again = await delivery();
    expect(again).to.include({ status: 'delivered', attempt_count: 2 });
    expect(again.attempts.map((attempt: { attempt: number }) => attempt.attempt)).to.deep.equal([1, 2]);
    const requests = receiver.received.filter((request) => request.headers['webhook-id'] === chosen.id);
    expect(requests[1]!.body, 'the same body').to.equal(requests[0]!.body);
    expect(new Webhook(hook.secret).verify(requests[1]!.body, requests[1]!.headers)).to.be.an('object');
  });

  it('sends a callback_url an endpoint allows, signed with that endpoint’s secret; refuses one none allows and queues nothing', async () => {
    const tenant = await platform.tenant(0);
    const hook = await endpoint(tenant, `${receiver.url}/callbacks`, { events: ['dataset.exported'] });
    const refused = await platform.t.public.post(invocationPath(tenant), {
      token: tenant.token,
      json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, callback_url: `${receiver.url}/elsewhere` },
    });
    expect(refused.status).to.equal(400);
    expect(refused.body.message).to.equal(
      `callback_url: no enabled webhook endpoint of the workspace allows ${receiver.url}/elsewhere; a supervisor registers one with the same origin and this path or a parent of it.`,
    );
    expect(await tenant.statuses(), 'nothing queued').to.deep.equal({});
    const escaping = await platform.t.public.post(invocationPath(tenant), {
      token: tenant.token,
      json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, callback_url: `${receiver.url}/callbacks/..%2felsewhere` },
    });
    expect(escaping.status).to.equal(400);
    expect(escaping.body.message).to.equal('callback_url is not allowed: the path contains an encoded slash or backslash (%2F, %5C).');
    expect(escaping.body.details).to.deep.equal([{ field: 'callback_url', message: 'the path contains an encoded slash or backslash (%2F, %5C)' }]);
    expect(await tenant.statuses(), 'nothing queued').to.deep.equal({});

    const reply = await platform.t.public.post(invocationPath(tenant), {
      token: tenant.token,
      json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, callback_url: `${receiver.url}/callbacks/job-7?run=1` },
    });
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.body.callback_url).to.equal(`${receiver.url}/callbacks/job-7?run=1`);
    await until(async () => receiver.received.length === 1, 'the callback');
    const [request] = receiver.received;
    expect(request!.path).to.equal('/callbacks/job-7?run=1');
    const verified = new Webhook(hook.secret).verify(request!.body, request!.headers) as { data: { invocation_id: string } };
    expect(verified.data.invocation_id).to.equal(reply.body.id);
    await until(() => allDelivered(tenant, hook.id, 1), 'the callback to be listed under its endpoint');
  });

  it('fails the pending deliveries of a disabled endpoint without sending them, and queues none for it', async () => {
    const owner = await newTenant(platform.t);
    const hook = await endpoint(owner, `${receiver.url}/hooks`, { events: ['dataset.exported'] });
    await receiver.refuse();
    await platform.t.platform.services.webhooks.queueDatasetExported(platform.t.platform.db, owner.ws.id, { id: 'd1' });
    const list = async () => (await deliveries(owner, hook.id)).body as Array<{ status: string; last_error: string | null; attempts: unknown[] }>;
    await until(async () => (await list())[0]?.attempts.length === 1, 'a refused attempt');
    expect((await platform.t.private.patch(`/api/webhook/${hook.id}`, { token: owner.token, json: { enabled: false } })).body.enabled).to.equal(false);
    await receiver.accept();
    await until(async () => (await list())[0]?.status === 'failed', 'the delivery to fail');
    expect((await list())[0]!.last_error).to.equal('The endpoint is disabled; nothing was sent.');
    await platform.t.platform.services.webhooks.queueDatasetExported(platform.t.platform.db, owner.ws.id, { id: 'd2' });
    expect(await list()).to.have.length(1);
    expect(receiver.received).to.deep.equal([]);
  });

  it('refuses to register a URL the outbound policy refuses without DNS, naming the field', async () => {
    const owner = await newTenant(platform.t);
    const reply = await platform.t.private.post('/api/webhook', { token: owner.token, json: { url: 'http://169.254.169.254/latest', events } });
    expect(reply.status).to.equal(400);
    expect(reply.body.message).to.equal('url is not allowed: 169.254.169.254 is a cloud metadata address');
    expect((await platform.t.private.get('/api/webhook', { token: owner.token })).body).to.deep.equal([]);
  });

  it('keeps endpoints and deliveries to their workspace (404 elsewhere, 403 for a user) and never shows a secret again', async () => {
    const owner = await platform.tenant(0);
    const hook = await endpoint(owner);
    await owner.invoke(1);
    await until(() => allDelivered(owner, hook.id, 1), 'the delivery');
    const [delivery] = (await deliveries(owner, hook.id)).body;

    const stranger = await newTenant(platform.t);
    const paths = [`/api/webhook/${hook.id}`, `/api/webhook/${hook.id}/delivery`, `/api/webhook/${hook.id}/delivery/${delivery.id}`];
    for (const path of paths) expect((await platform.t.private.get(path, { token: stranger.token })).status, path).to.equal(404);
    expect((await platform.t.private.post(`/api/webhook/${hook.id}/delivery/${delivery.id}/redeliver`, { token: stranger.token })).status).to.equal(404);
    expect((await platform.t.private.post(`/api/webhook/${hook.id}/rotate_secret`, { token: stranger.token })).status).to.equal(404);
    expect((await platform.t.private.patch(`/api/webhook/${hook.id}`, { token: stranger.token, json: { enabled: false } })).status).to.equal(404);
    expect((await platform.t.private.delete(`/api/webhook/${hook.id}`, { token: stranger.token })).status).to.equal(404);
    expect((await platform.t.private.get('/api/webhook', { token: stranger.token })).body).to.deep.equal([]);
    const member = await colleague(platform.t, owner, 'user');
    expect((await platform.t.private.get('/api/webhook', { token: member.token })).status).to.equal(403);

    const shown = await platform.t.private.get(`/api/webhook/${hook.id}`, { token: owner.token });
    expect(shown.body).to.not.have.property('secret');
    expect(JSON.stringify((await platform.t.private.get('/api/webhook', { token: owner.token })).body)).to.not.include(hook.secret);
    const row = await platform.t.platform.db('webhook_endpoints').where({ id: hook.id }).first();
    expect(JSON.stringify(row)).to.not.include(hook.secret.slice('whsec_'.length));
    expect(platform.t.platform.box.open(row.secret_sealed)).to.equal(hook.secret);

    const rotated = await platform.t.private.post(`/api/webhook/${hook.id}/rotate_secret`, { token: owner.token });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret).to.match(/^whsec_/).and.not.equal(hook.secret);
  });
});
