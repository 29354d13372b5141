import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createWorkspace } from '../../features/identity/admin.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { KeycloakAdmin, TestBrowser, keycloakConnections, keycloakEnv, passKeycloakDevice } from '../support/keycloak.js';
import { pythonCli } from '../support/python-cli.js';

// The device authorization flow (RFC 8628) of single sign-on against a real
// Keycloak (scripts/services/keycloak.sh): the person signs in on Keycloak's
// own pages with the user code, the CLI polls didyma's auth server, which
// alone talks to Keycloak. The platform's clock is moved on rather than
// waited for where a test polls after the interval; Keycloak, on its own
// clock, is asked at most once per device code there.

describe('single sign-on on a device without a browser (RFC 8628) through Keycloak', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let admin: KeycloakAdmin;
  let teamA: { id: number; name: string };
  /** Seconds the platform's clock is ahead of the real one. */
  let ahead = 0;
  const passSeconds = (seconds: number) => {
    ahead += seconds;
  };

  before(async () => {
    const name = unique('team-a');
    const connections = keycloakConnections([
      {
        id: 'keycloak',
        display_name: 'Keycloak',
        workspace_roles: [
          { group: 'ml-team-a', workspace: name, role: 'user' },
          { group: 'ml-team-a-supervisors', workspace: name, role: 'supervisor' },
        ],
        allowed_email_domains: ['example.test'],
        create_users: true,
      },
    ]);
    t = await startTestPlatform({ oidcConnections: connections }, () => Date.now() + ahead * 1000);
    teamA = await createWorkspace(t.platform.db, name);
    admin = await KeycloakAdmin.connect();
    await admin.enableDeviceGrant(keycloakEnv().clientId);
  });
  after(() => t?.close());

  const start = async () => {
    const started = await t.auth.post('/api/auth/sso/device', { json: { connection: 'keycloak' } });
    expect(started.status, started.text).to.equal(200);
    return started.body as { handle: string; user_code: string; verification_uri: string; verification_uri_complete: string; interval: number; expires_in: number };
  };
  const poll = (handle: string, workspace?: string) => t.auth.post('/api/auth/sso/device/token', { json: { handle, ...(workspace ? { workspace } : {}) } });
  const userOf = (email: string) => t.platform.db('users').where({ email }).first();

  it('signs the person in once they entered the code at Keycloak, with the roles of their groups, and spends the handle', async () => {
    const person = await admin.createUser(['ml-team-a', 'ml-team-a-supervisors']);
    const started = await start();
    expect(started.user_code).to.match(/^[A-Z]{4}-[A-Z]{4}$/);
    expect(started.verification_uri).to.equal(`${keycloakEnv().issuer}/device`);
    expect(started).to.include({ interval: 5, expires_in: 600 });
    const done = await passKeycloakDevice(new TestBrowser(), started.verification_uri_complete, person.username, person.password, true);
    expect(done.status).to.equal(200);
    passSeconds(started.interval);
    const tokens = await poll(started.handle, teamA.name);
    expect(tokens.status, tokens.text).to.equal(200);
    const verify = await t.auth.get('/api/auth/token/verify', { token: tokens.body.access });
    const user = await userOf(person.email);
    expect(verify.body.token_data).to.include({ user_id: user.id, workspace: teamA.name });
    expect(verify.body.token_data.permissions).to.have.members(['user', 'supervisor']);
    await t.platform.audit.drain();
    const audited = await t.platform.db('audit_records').where({ actor_user_id: user.id }).where('action', 'like', 'sso%');
    expect(audited.map((r: { action: string }) => r.action)).to.deep.equal(['ssoSetRole:supervisor']);
    // The family follows Keycloak at refresh like every single sign-on's.
    expect((await t.auth.post('/api/auth/token/refresh', { json: { refresh: tokens.body.refresh } })).status).to.equal(200);

    passSeconds(started.interval);
    const again = await poll(started.handle, teamA.name);
    expect(again.status).to.equal(400);
    expect(again.body.message_code).to.equal('expired_token');
  });

  it('answers slow_down to a poll before the interval, without asking Keycloak, and lengthens the interval', async () => {
    const started = await start();
    const early = await poll(started.handle);
    expect(early.status).to.equal(429);
    expect(early.body.message_code).to.equal('slow_down');
    expect(early.headers.get('retry-after')).to.equal(String(started.interval + 5));
    passSeconds(started.interval);
    const stillEarly = await poll(started.handle);
    expect(stillEarly.body.message_code).to.equal('slow_down');
    expect(stillEarly.headers.get('retry-after')).to.equal(String(started.interval + 10));
    passSeconds(started.interval + 10);
    const pending = await poll(started.handle);
    expect(pending.status, pending.text).to.equal(400);
    expect(pending.body.message_code).to.equal('authorization_pending');
  });

  it('refuses the sign-in the person denied at Keycloak, and the handle after it', async () => {
    const person = await admin.createUser(['ml-team-a']);
    const started = await start();
    const denied = await passKeycloakDevice(new TestBrowser(), started.verification_uri_complete, person.username, person.password, false);
    expect(denied.text).to.contain('Consent denied');
    passSeconds(started.interval);
    const refused = await poll(started.handle);
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body.message_code).to.equal('access_denied');
    passSeconds(started.interval);
    expect((await poll(started.handle)).body.message_code).to.equal('expired_token');
    expect(await userOf(person.email)).to.equal(undefined);
  });

  it('refuses a handle past its expiry, and one that was never given', async () => {
    const started = await start();
    passSeconds(started.expires_in);
    const late = await poll(started.handle);
    expect(late.status).to.equal(400);
    expect(late.body.message_code).to.equal('expired_token');
    const forged = await poll(crypto.randomBytes(32).toString('base64url'));
    expect(forged.status).to.equal(400);
    expect(forged.body.message_code).to.equal('expired_token');
  });

  it('refuses an unknown connection', async () => {
    const unknown = await t.auth.post('/api/auth/sso/device', { json: { connection: 'nowhere' } });
    expect(unknown.status).to.equal(404);
  });

  it('logs the Python CLI in with a code entered at Keycloak (didyma login --sso --device), with the roles of the groups', async () => {
    const person = await admin.createUser(['ml-team-a', 'ml-team-a-supervisors']);
    const config = path.join(os.tmpdir(), `didyma-cli-${crypto.randomBytes(5).toString('hex')}.json`);
    const cli = pythonCli(config);
    const login = cli.run(['--auth-url', t.auth.baseUrl, 'login', '--sso', 'keycloak', '--device', '--workspace', teamA.name, '--sso-timeout', '60']);
    const userCode = await login.line(/with the code (\S+)/);
    const complete = await login.line(/or open: (\S+)/);
    expect(new URL(complete).searchParams.get('user_code')).to.equal(userCode);
    expect((await passKeycloakDevice(new TestBrowser(), complete, person.username, person.password, true)).status).to.equal(200);
    const done = await login.exit;
    expect(done.code, done.output).to.equal(0);
    const saved = JSON.parse(fs.readFileSync(config, 'utf8'));
    expect(saved).to.include({ kind: 'sso', connection: 'keycloak', workspace: teamA.name });
    const verify = await t.auth.get('/api/auth/token/verify', { token: saved.access });
    expect(verify.body.token_data.permissions).to.have.members(['user', 'supervisor']);
    const whoami = await cli.run(['--auth-url', t.auth.baseUrl, 'whoami']).exit;
    expect(whoami.code, whoami.output).to.equal(0);
    expect(whoami.output).to.contain('signed in through keycloak');
    expect(whoami.output).to.match(/roles\s+user, supervisor/);
    fs.rmSync(config, { force: true });
  });
});
