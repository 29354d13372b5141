import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../infra/logging/logger.js';
import { login, PASSWORD, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { tenant, type Tenant } from '../../test/support/fixtures.js';
import { sendPlain, servedOperations } from '../../test/support/documented-operations.js';
import { DashboardClient } from '../../test/support/dashboard-client.js';

// Log lines as an attacker with read access to the logs would use them: a
// token copied from a URL in the log must never work. Every operation of the
// three servers is driven with live credentials in play (bearer tokens, an
// API key, an invitation token in the path, a password and a refresh token
// in bodies), and no line may hold one of them.

describe('log lines hold no live secret', () => {
  let t: TestPlatform;
  let a: Tenant;
  const lines: string[] = [];

  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    t = await startTestPlatform({ exposeTokenApi: true }, undefined, { logger: createLogger('debug', 'didyma', sink) });
    a = await tenant(t);
  });
  after(() => t.close());

  it('redacts invitation tokens from URLs and never logs a token, password or key it saw', async () => {
    const invited = await t.auth.post('/api/auth/invitation', { token: a.token, json: { email: `${unique('invitee')}@example.test`, role: 'user' } });
    const invitation = new URL(invited.body.invitation_url).searchParams.get('token')!;
    const { refresh } = await login(t.auth, a.user, a.ws.name);
    const principal = await t.platform.authenticator.authenticate(a.token);
    const { key } = await t.platform.identity.apiTokens.create(principal, a.ws.id, { name: 'log-test', expiration_date: '2999-01-01' });
    const application = await t.platform.identity.oauth.create(principal, a.ws.id, { name: 'log-test' });
    const connector = `pat-${unique('connector')}`;
    const secrets = { invitation, access: a.token, refresh, key, password: PASSWORD, clientSecret: application.client_secret, connector };

    for (const operation of await servedOperations({ auth: t.auth, private: t.private, public: t.public })) {
      for (const token of [a.token, key]) await sendPlain(operation, { token, known: { token: invitation } });
    }
    await t.auth.post('/o/token', { form: { grant_type: 'client_credentials', client_id: application.client_id, client_secret: application.client_secret } });
    await t.auth.post('/o/token', { form: { grant_type: 'client_credentials', client_id: application.client_id, client_secret: connector } });
    // Connectors that cannot be reached with their secrets: the errors must not carry them (nor a URL's user-info).
    await t.private.post('/api/storage', {
      token: a.token,
      json: { storage_key: unique('s3'), storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: 'ak', secret_key: connector, endpoint: `http://ak:${connector}@127.0.0.1:9`, bucket_name: 'b' } },
    });
    await t.private.post('/api/deployment', {
      token: a.token,
      json: {
        deployment_key: unique('dep'),
        registry_connector_class: 'didyma.registry.MlflowRegistryConnector',
        registry_connector_init: { model_registry_url: `http://u:${connector}@127.0.0.1:9`, tracking_server_url: 'http://127.0.0.1:9', tracking_server_pat: connector },
        server_proxy_class: 'didyma.proxy.MlflowServerProxy',
        server_proxy_init: { server_proxy_url: 'http://127.0.0.1:9', server_proxy_pat: connector },
      },
    });
    await t.auth.post('/api/auth/token/refresh', { json: { refresh } });
    await t.auth.post('/api/auth/token/obtain', { json: { email: a.user.email, password: PASSWORD } });
    await t.auth.post('/api/auth/register', { json: { token: invitation, name: 'N', surname: 'S', password: PASSWORD, preferred_language: 'en', accept_terms: true, accept_privacy: true } });
    const browser = new DashboardClient(t.auth.baseUrl);
    await browser.get(`/dashboard/register?token=${invitation}`);
    await browser.get(`/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/register?token=${invitation}`)}`);
    await browser.signIn(a.user.email, PASSWORD, a.ws.name);
    await new Promise((resolve) => setTimeout(resolve, 100));

    const log = lines.join('');
    expect(log).to.include('/api/auth/invitation/[redacted]');
    expect(log).to.include('/dashboard/register?token=[redacted]');
    for (const [name, secret] of Object.entries(secrets)) expect(log.includes(secret), `the ${name} appears in a log line`).to.equal(false);
  });
});
