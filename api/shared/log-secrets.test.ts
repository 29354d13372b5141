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
    const secrets = { invitation, access: a.token, refresh, key, password: PASSWORD };

    for (const operation of await servedOperations({ auth: t.auth, private: t.private, public: t.public })) {
      for (const token of [a.token, key]) await sendPlain(operation, { token, known: { token: invitation } });
    }
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
