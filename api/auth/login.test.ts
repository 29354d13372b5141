import crypto from 'node:crypto';
import { expect } from 'chai';
import { SignJWT, UnsecuredJWT } from 'jose';
import { TokenService } from '../../features/auth/tokens.js';
import { generateSigningKeys } from '../../features/auth/keys.js';
import { login, makeUser, makeWorkspace, startTestPlatform, testKeys, type TestPlatform } from '../../test/support/platform.js';
import { randomAddress } from '../../test/support/sources.js';

describe('auth server: login, refresh and verify', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  const settings = { issuer: 'didyma', audience: 'didyma-api', accessTtlSeconds: 900, refreshTtlSeconds: 86400, cacheSize: 0 };

  it('issues an access and a refresh token bound to the workspace', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const tokens = await login(t.auth, user, ws.name);
    const verify = await t.auth.get('/api/auth/token/verify', { token: tokens.access });
    expect(verify.status).to.equal(200);
    expect(verify.body.valid).to.equal(true);
    expect(verify.body.token_data).to.include({ token_type: 'access', user_id: user.id, workspace: ws.name });
    expect(verify.body.token_data.permissions).to.have.members(['user', 'supervisor']);
    expect(verify.body.token_data.jti).to.be.a('string');
    expect(verify.body.token_data.exp - verify.body.token_data.iat).to.equal(900);
  });

  it('issues an unbound token without a workspace: it lists workspaces and verifies itself, nothing else', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'user']]);
    const tokens = await login(t.auth, user);
    const verify = await t.auth.get('/api/auth/token/verify', { token: tokens.access });
    expect(verify.body.token_data.workspace).to.equal(null);
    const list = await t.auth.get('/api/auth/workspace', { token: tokens.access });
    expect(list.status).to.equal(200);
    expect(list.body.map((w: { name: string }) => w.name)).to.deep.equal([ws.name]);
    const invite = await t.auth.post('/api/auth/invitation', { token: tokens.access, json: { email: 'x@example.test', role: 'user' } });
    expect(invite.status).to.equal(403);
    const logo = await t.auth.get(`/api/auth/workspace/${ws.id}/logo`, { token: tokens.access });
    expect(logo.status).to.equal(403);
  });

  it('refuses a wrong password, an unknown e-mail and a foreign workspace', async () => {
    const user = await makeUser(t.platform);
    const other = await makeWorkspace(t.platform);
    const wrong = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: 'nope' } });
    expect(wrong.status).to.equal(401);
    expect(wrong.body).to.include({ message_code: 'not_authenticated' });
    const unknown = await t.auth.post('/api/auth/token/obtain', { json: { email: 'ghost@example.test', password: 'nope' } });
    expect(unknown.status).to.equal(401);
    const foreign = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password, workspace: other.name } });
    expect(foreign.status).to.equal(403);
    const missing = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password, workspace: 'no-such-ws' } });
    expect(missing.status).to.equal(403);
    expect(missing.body.message).to.equal(foreign.body.message);
  });

  it('answers 400 with the field for a malformed body', async () => {
    const reply = await t.auth.post('/api/auth/token/obtain', { json: { email: 'a@b.c' } });
    expect(reply.status).to.equal(400);
    expect(reply.body.message_code).to.equal('validation_error');
    expect(reply.body.message).to.match(/password/);
    const notJson = await t.auth.post('/api/auth/token/obtain', { rawBody: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).to.equal(400);
  });

  it('rotates refresh tokens and revokes the whole family when a rotated one is reused', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'user']]);
    const first = await login(t.auth, user, ws.name);
    const second = await t.auth.post('/api/auth/token/refresh', { json: { refresh: first.refresh } });
    expect(second.status).to.equal(200);
    expect(second.body.refresh).to.not.equal(first.refresh);
    expect((await t.auth.get('/api/auth/token/verify', { token: second.body.access })).status).to.equal(200);

    const reuse = await t.auth.post('/api/auth/token/refresh', { json: { refresh: first.refresh } });
    expect(reuse.status).to.equal(401);
    const afterReuse = await t.auth.post('/api/auth/token/refresh', { json: { refresh: second.body.refresh } });
    expect(afterReuse.status).to.equal(401);
    expect(afterReuse.body.message).to.match(/revoked/);
  });

  it('refuses forged and misused tokens', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const good = await login(t.auth, user, ws.name);
    const claims = { token_type: 'access', user_id: user.id, workspace: ws.name, workspace_id: ws.id, permissions: ['user', 'supervisor', 'staff'] };

    const none = new UnsecuredJWT(claims).setIssuer('didyma').setAudience('didyma-api').setSubject(String(user.id)).setJti('x').setIssuedAt().setExpirationTime('10m').encode();
    const otherKey = await new TokenService(generateSigningKeys(), settings).issueAccess({ userId: user.id, workspace: ws, permissions: ['user', 'staff'] });
    const expired = await new TokenService(testKeys, settings, () => Date.now() - 3600_000).issueAccess({ userId: user.id, workspace: ws, permissions: ['user'] });
    const wrongAudience = await new TokenService(testKeys, { ...settings, audience: 'someone-else' }).issueAccess({ userId: user.id, workspace: ws, permissions: ['user'] });
    const hmacWithPublicKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('didyma')
      .setAudience('didyma-api')
      .setSubject(String(user.id))
      .setJti('y')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new Uint8Array(testKeys.publicKey.export({ type: 'spki', format: 'der' })));
    const tampered = good.access.replace(/\.([^.]+)\./, (_m, payload: string) => {
      const body = JSON.parse(Buffer.from(payload, 'base64url').toString());
      body.permissions.push('staff');
      return `.${Buffer.from(JSON.stringify(body)).toString('base64url')}.`;
    });

    for (const [label, token] of Object.entries({ none, otherKey, wrongAudience, hmacWithPublicKey, tampered, refreshAsAccess: good.refresh, garbage: 'abc.def.ghi' })) {
      const reply = await t.auth.get('/api/auth/token/verify', { token });
      expect(reply.status, label).to.equal(401);
      expect(reply.body.message_code, label).to.equal('not_authenticated');
    }
    // A token of ours that has expired reads as such on verify, and authenticates nowhere.
    const expiredVerdict = await t.auth.get('/api/auth/token/verify', { token: expired });
    expect(expiredVerdict.status).to.equal(200);
    expect(expiredVerdict.body.valid).to.equal(false);
    expect(expiredVerdict.body.token_data).to.include({ user_id: user.id, workspace: ws.name });
    const expiredReply = await t.auth.get('/api/auth/workspace', { token: expired });
    expect(expiredReply.status).to.equal(401);
    expect(expiredReply.body.message).to.match(/expired/);
    expect((await t.auth.get('/api/auth/token/verify')).status).to.equal(401);
    const accessAsRefresh = await t.auth.post('/api/auth/token/refresh', { json: { refresh: good.access } });
    expect(accessAsRefresh.status).to.equal(401);
  });

  it('publishes the verification key as JWKS', async () => {
    const reply = await t.auth.get('/api/auth/jwks.json');
    expect(reply.status).to.equal(200);
    expect(reply.body.keys[0]).to.include({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', kid: testKeys.kid });
    expect(reply.body.keys[0]).to.not.have.property('d');
  });

  it('serves its OpenAPI document, health and readiness', async () => {
    const doc = await t.auth.get('/openapi.json');
    expect(doc.body.openapi).to.equal('3.1.0');
    expect(doc.body.paths).to.have.property('/api/auth/token/obtain');
    expect(doc.body.paths).to.not.have.property('/api/auth/workspace/{workspaceId}/token');
    expect((await t.auth.get('/healthz')).status).to.equal(200);
    expect((await t.auth.get('/readyz')).status).to.equal(200);
    expect((await t.auth.get('/api/nowhere')).status).to.equal(404);
  });
});

describe('auth server: password sign-in for staff only', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ passwordSignIn: 'staff' });
  });
  after(() => t.close());

  it('refuses everyone but staff a password sign-in, with a message saying where to sign in', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const refused = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password, workspace: ws.name } });
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.contain('sign in through single sign-on');
    const wrong = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: 'not-the-password' } });
    expect(wrong.status).to.equal(401);
    const staff = await makeUser(t.platform, { staff: true });
    expect((await t.auth.post('/api/auth/token/obtain', { json: { email: staff.email, password: staff.password } })).status).to.equal(200);
  });
});

describe('auth server: rate limits', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ loginLimitPerSource: 3, loginLimitPerClient: 100000 });
  });
  after(() => t.close());

  it('answers 429 with Retry-After once a source is over its login limit on an account', async () => {
    const user = await makeUser(t.platform);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: 'wrong' } })).status);
    expect(statuses).to.deep.equal([401, 401, 401, 429]);
    const limited = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password } });
    expect(limited.status).to.equal(429);
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(limited.body.message_code).to.equal('rate_limited');
    expect(limited.body.message, 'says it is locked, and for how long').to.match(/^Too many attempts: locked for \d+ (seconds?|minutes?)\. Try again after that\.$/);
  });

  it('counts failed logins only: successful ones never lock out, and clear the failures before them', async () => {
    const user = await makeUser(t.platform);
    const attempt = (password: string) => t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password } }).then((reply) => reply.status);
    const statuses: number[] = [];
    // Notebook cells run again and again: many more logins than the limit of 3.
    for (let i = 0; i < 6; i++) statuses.push(await attempt(user.password));
    expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 200]);
    const mixed = [await attempt('wrong'), await attempt('wrong'), await attempt(user.password), await attempt('wrong'), await attempt('wrong'), await attempt('wrong')];
    expect(mixed, 'the success in between clears the two failures before it').to.deep.equal([401, 401, 200, 401, 401, 401]);
    const locked = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password } });
    expect(locked.status).to.equal(429);
    expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 60);
    expect(locked.body.message).to.match(/locked for \d+ (seconds?|minutes?)/);
  });

  it('limits per client address too, counting every replica’s attempts', async () => {
    // Two replicas behind one proxy hop; the client address is one no other test uses.
    const replicas = await Promise.all([1, 2].map(() => startTestPlatform({ loginLimitPerClient: 2, trustProxy: '1' })));
    const address = randomAddress();
    try {
      const statuses: number[] = [];
      for (const replica of [0, 1, 0]) {
        const attempt = { json: { email: `${crypto.randomUUID()}@x.test`, password: 'x' }, headers: { 'x-forwarded-for': address } };
        statuses.push((await replicas[replica]!.auth.post('/api/auth/token/obtain', attempt)).status);
      }
      expect(statuses).to.deep.equal([401, 401, 429]);
      // Another address is not affected.
      const other = await replicas[1]!.auth.post('/api/auth/token/obtain', { json: { email: 'a@x.test', password: 'x' }, headers: { 'x-forwarded-for': randomAddress() } });
      expect(other.status).to.equal(401);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }
  });

  it('counts only the failures of a client address', async () => {
    const replica = await startTestPlatform({ loginLimitPerClient: 2, trustProxy: '1' });
    const headers = { 'x-forwarded-for': randomAddress() };
    try {
      const user = await makeUser(replica.platform);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await replica.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password }, headers })).status);
      for (let i = 0; i < 3; i++) statuses.push((await replica.auth.post('/api/auth/token/obtain', { json: { email: `${crypto.randomUUID()}@x.test`, password: 'x' }, headers })).status);
      expect(statuses).to.deep.equal([200, 200, 200, 200, 401, 401, 429]);
    } finally {
      await replica.close();
    }
  });
});
