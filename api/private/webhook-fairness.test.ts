import { expect } from 'chai';
import { tenant as newTenant, type Tenant } from '../../test/support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { until } from '../../test/support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { webhookWorkspaceCap } from '../../kernel/config/config.js';

// Webhook deliveries are a shared resource: the deliverers' slots. A
// workspace registers as many endpoints as it may at a receiver that answers
// only after 14 s and queues deliveries to all of them; another workspace's
// delivery must still go out at once, with two processes delivering.

describe('webhooks: fair between workspaces', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let second: TestPlatform;
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;
  before(async () => {
    platform = await startTestPlatform({ webhookPollMs: 50, webhookMaxEndpoints: 12 });
    second = await startTestPlatform({ webhookPollMs: 50, webhookMaxEndpoints: 12 });
  });
  after(async () => {
    await second?.close();
    await platform?.close();
  });
  beforeEach(async () => {
    slow = await startWebhookReceiver();
    fast = await startWebhookReceiver();
  });
  afterEach(async () => {
    await Promise.all([slow.close(), fast.close()]);
  });

  const register = (owner: Tenant, url: string) => platform.private.post('/api/webhook', { token: owner.token, json: { url, events: ['dataset.exported'] } });
  const exported = (owner: Tenant, id: string) => platform.platform.services.webhooks.queueDatasetExported(platform.platform.db, owner.ws.id, { id });
  const leasedOf = async (owner: Tenant) =>
    Number((await platform.platform.db('webhook_deliveries').where({ workspace_id: owner.ws.id, status: 'pending' }).where('lease_expires_at', '>', platform.platform.db.fn.now()).count({ n: '*' }))[0]!.n);

  it('keeps a workspace with the most endpoints at a slow receiver to its own slots: another workspace’s delivery goes out at once', async () => {
    const { webhookMaxEndpoints: max, webhookConcurrency: slots } = platform.platform.config;
    const cap = webhookWorkspaceCap(platform.platform.config);
    const noisy = await newTenant(platform);
    for (let i = 0; i < max; i++) expect((await register(noisy, `${slow.url}/hooks/${i}`)).status).to.equal(201);
    slow.delay(14_000);
    // Each of the noisy workspace's exports is a delivery to every one of its endpoints: more than both processes' slots.
    for (let i = 0; i < Math.ceil((3 * slots) / max); i++) await exported(noisy, `noisy-${i}`);
    await until(async () => slow.pending() === cap, 'the slow receiver to hold the noisy workspace’s slots');

    const quiet = await newTenant(platform);
    expect((await register(quiet, `${fast.url}/hooks`)).status).to.equal(201);
    await exported(quiet, 'quiet');
    await until(async () => fast.received.length === 1, 'the quiet workspace’s delivery', 5_000);
    for (const client of [platform.auth, platform.private, platform.public]) expect((await client.get('/healthz')).status).to.equal(200);
    expect(slow.pending(), 'the noisy workspace still holds its cap, no more, across two processes').to.equal(cap);
    expect(await leasedOf(noisy)).to.equal(cap);
    expect(slow.received).to.have.length(0);
  });

  it('refuses an endpoint over the workspace’s maximum with a 409 naming it, keeping the others', async () => {
    const max = platform.platform.config.webhookMaxEndpoints;
    const owner = await newTenant(platform);
    for (let i = 0; i < max - 1; i++) expect((await register(owner, `${fast.url}/hooks/${i}`)).status).to.equal(201);
    // The last place, asked for three times at once: one registration gets it.
    const racing = await Promise.all([0, 1, 2].map((i) => register(owner, `${fast.url}/race/${i}`)));
    expect(racing.map((reply) => reply.status).sort()).to.deep.equal([201, 409, 409]);
    const refused = racing.find((reply) => reply.status === 409)!;
    expect(refused.body).to.deep.equal({
      message: `The workspace has ${max} webhook endpoints, the most it may have (DIDYMA_WEBHOOK_MAX_ENDPOINTS); delete one before registering another.`,
      message_code: 'endpoint_limit',
    });
    const listed = await platform.private.get('/api/webhook', { token: owner.token });
    expect(listed.headers.get('x-total-count')).to.equal(String(max));

    await exported(owner, 'all');
    await until(async () => fast.received.length === max, 'a delivery to every endpoint');
    const other = await newTenant(platform);
    expect((await register(other, `${fast.url}/other`)).status, 'the maximum is per workspace').to.equal(201);
  });
});
