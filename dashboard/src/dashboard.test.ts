import crypto from 'node:crypto';
import { expect } from 'chai';
import { sha256 } from '../../infra/crypto/random.js';
import { PASSWORD, makeUser, makeWorkspace, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { DashboardClient, csrfOf } from '../../test/support/dashboard-client.js';
import { startPrometheusStub } from '../../test/support/prometheus-stub.js';
import { until } from '../../test/support/until.js';

describe('dashboard over HTTP', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  async function member(role: 'user' | 'supervisor') {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, role]]);
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(user.email, PASSWORD, ws.name);
    return { user, ws, client };
  }

  it('sends visitors who are not signed in to the sign-in page, and back afterwards', async () => {
    const client = new DashboardClient(t.auth.baseUrl);
    const reply = await client.get('/dashboard/tokens');
    expect(reply.status).to.equal(303);
    expect(reply.location).to.equal('/dashboard/sign-in?next=%2Fdashboard%2Ftokens');
  });

  it('serves pages under a strict Content-Security-Policy without inline script or style', async () => {
    const reply = await new DashboardClient(t.auth.baseUrl).get('/dashboard/sign-in');
    expect(reply.status).to.equal(200);
    expect(reply.headers.get('content-security-policy')).to.contain("default-src 'self'").and.contain("script-src 'self'").and.contain("frame-ancestors 'none'");
    expect(reply.headers.get('cache-control')).to.equal('no-store');
    expect(reply.text).not.to.match(/<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=/i);
    expect(reply.text).to.contain('<label for="field-email">E-mail</label>');
  });

  it('sets only httpOnly SameSite=Strict cookies, without Secure on a plain-http dashboard', async () => {
    const client = new DashboardClient(t.auth.baseUrl);
    const page = await client.get('/dashboard/sign-in');
    expect(page.setCookies).to.have.length(1);
    expect(page.setCookies[0]).to.match(/^dy_csrf=[A-Za-z0-9_-]{43}; Path=\/; SameSite=Strict; HttpOnly$/);
    const user = await makeUser(t.platform);
    const signedIn = await client.post('/dashboard/sign-in', { email: user.email, password: PASSWORD, workspace: '' }, page);
    expect(signedIn.setCookies.find((c) => c.startsWith('dy_session='))).to.match(/; Path=\/; SameSite=Strict; HttpOnly$/);
  });

  it('refuses a form without its CSRF token, or with the token of another visitor', async () => {
    const user = await makeUser(t.platform);
    const attacker = new DashboardClient(t.auth.baseUrl);
    const attackerPage = await attacker.get('/dashboard/sign-in');
    const victim = new DashboardClient(t.auth.baseUrl);
    await victim.get('/dashboard/sign-in');
    const missing = await victim.post('/dashboard/sign-in', { email: user.email, password: PASSWORD });
    const foreign = await victim.post('/dashboard/sign-in', { email: user.email, password: PASSWORD, _csrf: csrfOf(attackerPage.text) });
    expect([missing.status, foreign.status]).to.deep.equal([403, 403]);
    expect(foreign.text).to.contain('This form has expired or did not come from the dashboard.');
    expect(victim.cookies.has('dy_session')).to.equal(false);
  });

  it('binds the forms of a session to that session: a token from before sign-in no longer works', async () => {
    const { client } = await member('supervisor');
    const anonymous = new DashboardClient(t.auth.baseUrl);
    const page = await anonymous.get('/dashboard/sign-in');
    const reply = await client.post('/dashboard/tokens', { name: 'x', expiration_date: '2999-01-01', _csrf: csrfOf(page.text) });
    expect(reply.status).to.equal(403);
  });

  it('keeps the session id only hashed, and deletes the session on sign-out', async () => {
    const { client, ws } = await member('supervisor');
    const id = client.cookies.get('dy_session')!;
    expect(await t.platform.db('dashboard_sessions').where('id_hash', sha256(id)).first()).to.include({ workspace_id: ws.id });
    const home = await client.get('/dashboard');
    const out = await client.post('/dashboard/sign-out', {}, home);
    expect(out.location).to.equal('/dashboard/sign-in?notice=signed-out');
    expect(await t.platform.db('dashboard_sessions').where('id_hash', sha256(id)).first()).to.equal(undefined);
    expect((await client.get('/dashboard')).status).to.equal(303);
  });

  it('answers 403 to a plain user on every supervisor page and form, and shows none of them in the navigation', async () => {
    const { client } = await member('user');
    const home = await client.get('/dashboard');
    expect(home.status).to.equal(200);
    for (const path of ['/tokens', '/applications', '/members', '/settings', '/models', '/deployments', '/storage', '/metrics', '/webhooks', '/workspaces']) {
      expect(home.text).not.to.contain(`href="/dashboard${path}"`);
      expect((await client.get(`/dashboard${path}`)).status, path).to.equal(403);
    }
    const refused = await client.post('/dashboard/tokens', { name: 'sneaky', expiration_date: '2999-01-01' }, home);
    expect(refused.status).to.equal(403);
    expect(await t.platform.db('api_tokens').where('name', 'sneaky').first()).to.equal(undefined);
  });

  it("charts the workspace's queue depth, calls in flight and queue wait on the metrics page", async () => {
    const prometheus = await startPrometheusStub();
    const charted = await startTestPlatform({ prometheusUrl: prometheus.url });
    try {
      const user = await makeUser(charted.platform);
      const ws = await makeWorkspace(charted.platform, [[user, 'supervisor']]);
      const client = new DashboardClient(charted.auth.baseUrl);
      await client.signIn(user.email, PASSWORD, ws.name);
      const page = await client.get('/dashboard/metrics');
      expect(page.status).to.equal(200);
      for (const [name, heading] of [['queued_invocations', 'queued invocations'], ['in_flight_invocations', 'in flight invocations'], ['queue_wait_seconds', 'queue wait seconds']]) {
        expect(page.text).to.contain(`<h2 id="metric-${name}">${heading}</h2>`);
        expect(page.text).to.contain(`id="chart-${name}`);
      }
      const waits = prometheus.queries.filter((q) => q.includes('didyma_invocation_queue_wait_seconds_bucket'));
      expect(waits).to.have.length(1);
      expect(waits[0]!.match(/workspace="([^"]*)"/g)).to.deep.equal([`workspace="${ws.name}"`, `workspace="${ws.name}"`, `workspace="${ws.name}"`]);
    } finally {
      await charted.close();
      await prometheus.close();
    }
  });

  it('escapes what users typed wherever it is shown', async () => {
    const { client } = await member('supervisor');
    const page = await client.get('/dashboard/members');
    const email = '<img/src=x/onerror=alert(1)>@example.test';
    const invited = await client.post('/dashboard/members/invitations', { email, role: 'user' }, page);
    expect(invited.status).to.equal(200);
    expect(invited.text).not.to.contain('<img/src');
    expect(invited.text).to.contain('&lt;img/src=x/onerror=alert(1)&gt;@example.test');
    const tokens = await client.get('/dashboard/tokens');
    const created = await client.post('/dashboard/tokens', { name: '"><script>alert(1)</script>', expiration_date: '2999-01-01' }, tokens);
    expect(created.text).not.to.contain('<script>alert');
    expect(created.text).to.contain(`&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;`);
  });

  it('shows a new API key once, and never again in the list', async () => {
    const { client } = await member('supervisor');
    const page = await client.get('/dashboard/tokens');
    const created = await client.post('/dashboard/tokens', { name: 'ci', expiration_date: '2999-01-01' }, page);
    const key = /id="new-token-key" type="text" readonly value="(dy_[^"]+)"/.exec(created.text)![1]!;
    expect(created.text).to.contain('it is shown only once');
    expect((await client.get('/dashboard/tokens')).text).not.to.contain(key);
  });

  it('registers a webhook endpoint showing its secret once, lists its deliveries and redelivers one', async () => {
    const { client, ws } = await member('supervisor');
    const page = await client.get('/dashboard/webhooks');
    expect(page.status).to.equal(200);
    const form = { url: 'http://127.0.0.1:1/hooks', description: 'ops', 'event:dataset.exported': 'on' };
    const created = await client.post('/dashboard/webhooks', form, page);
    const secret = /id="new-webhook-secret" type="text" readonly value="(whsec_[^"]+)"/.exec(created.text)![1]!;
    expect(created.text).to.contain('it is shown only once');
    const listed = await client.get('/dashboard/webhooks');
    expect(listed.text).to.contain('http://127.0.0.1:1/hooks').and.not.contain(secret);

    const endpoint = (await t.platform.db('webhook_endpoints').where({ workspace_id: ws.id }).first()) as { id: number };
    await t.platform.services.webhooks.queueDatasetExported(t.platform.db, ws.id, { id: 'dataset-1' });
    const delivery = (await t.platform.db('webhook_deliveries').where({ endpoint_id: endpoint.id }).first()) as { id: string };
    const deliveries = await client.get(`/dashboard/webhooks/${endpoint.id}`);
    expect(deliveries.status).to.equal(200);
    expect(deliveries.text).to.contain(delivery.id).and.contain('dataset.<wbr>exported');
    await until(async () => ((await t.platform.db('webhook_deliveries').where({ id: delivery.id }).first()) as { attempts: number }).attempts > 0, 'an attempt');
    await until(async () => (await t.platform.db('webhook_deliveries').where({ id: delivery.id }).whereNull('lease_expires_at').first()) !== undefined, 'the attempt to end');
    const redelivered = await client.post(`/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`, {}, deliveries);
    expect(redelivered.location).to.equal(`/dashboard/webhooks/${endpoint.id}?notice=webhook-redelivered`);
    expect((await client.get(redelivered.location!)).text).to.contain('The delivery is queued again, with the same webhook-id.');

    const stranger = await member('supervisor');
    expect((await stranger.client.get(`/dashboard/webhooks/${endpoint.id}`)).status).to.equal(404);
  });

  it("opens the sessions and datasets pages to every member of a workspace, and to no one outside one", async () => {
    const { client } = await member('user');
    for (const path of ['/sessions', '/datasets']) expect((await client.get(`/dashboard${path}`)).status, path).to.equal(200);
    const home = await client.get('/dashboard');
    expect(home.text).to.contain('href="/dashboard/sessions"').and.contain('href="/dashboard/datasets"');
    const unbound = new DashboardClient(t.auth.baseUrl);
    await unbound.signIn((await makeUser(t.platform)).email, PASSWORD);
    expect((await unbound.get('/dashboard/sessions')).status).to.equal(403);
    expect((await client.get('/dashboard/datasets/not-a-uuid/records')).status).to.equal(404);
    expect((await client.get(`/dashboard/datasets/${crypto.randomUUID()}/records`)).status).to.equal(404);
  });

  it('checks an export as the API checks its body, and writes nothing it refuses', async () => {
    const { client, user } = await member('user');
    const page = await client.get('/dashboard/datasets');
    const form = { model: 'iris-classifier:1', session: crypto.randomUUID(), storage_key: 'files', name: 'ok', format: 'jsonl' };
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ name: 'not a name' }, /^Name: /],
      [{ session: 'yesterday' }, /^Session: /],
      [{ storage_key: '../x' }, /^Storage: /],
      [{ format: 'csv' }, /^Format: one of JSON Lines, Apache Parquet\.$/],
      [{ model: 'no-version' }, /^Model: /],
    ];
    for (const [change, message] of refusals) {
      const reply = await client.post('/dashboard/datasets', { ...form, ...change }, page);
      expect(reply.status, JSON.stringify(change)).to.equal(400);
      expect(/<div class="alert alert-error" role="alert">([^<]*)</.exec(reply.text)![1], JSON.stringify(change)).to.match(message);
    }
    // Well formed, the session is looked up like on the API: not one of the caller's, 404.
    expect((await client.post('/dashboard/datasets', form, page)).status).to.equal(404);
    expect(await t.platform.db('datasets').where({ created_by_id: user.id }).first()).to.equal(undefined);
  });

  it('uses __Host- cookies with Secure when the dashboard URL is https', async () => {
    const secure = await startTestPlatform({ dashboardUrl: 'https://dashboard.example.test/dashboard' });
    try {
      const page = await new DashboardClient(secure.auth.baseUrl).get('/dashboard/sign-in');
      expect(page.setCookies[0]).to.match(/^__Host-dy_csrf=[A-Za-z0-9_-]{43}; Path=\/; SameSite=Strict; HttpOnly; Secure$/);
    } finally {
      await secure.close();
    }
  });
});
