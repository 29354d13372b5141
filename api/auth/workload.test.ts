import { expect } from 'chai';
import { SignJWT, decodeJwt } from 'jose';
import { parseWorkloadIssuers } from '../../kernel/config/workload.js';
import { makeStaff, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { TestWorkloadIssuer, issuerKey, type IssuerKey } from '../../test/support/workload-issuer.js';
import { until } from '../../test/support/until.js';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('auth server: token exchange for workloads (RFC 8693), JWTs of a configured issuer', () => {
  let t: TestPlatform;
  let issuer: TestWorkloadIssuer;
  let key: IssuerKey;
  let teamA: { id: number; name: string };
  let teamB: { id: number; name: string };

  const exchange = (subjectToken: string, extra: Record<string, string> = {}) =>
    t.auth.post('/o/token', { form: { grant_type: EXCHANGE, subject_token: subjectToken, subject_token_type: JWT, ...extra } });

  before(async () => {
    issuer = await new TestWorkloadIssuer().start();
    key = await issuerKey('k1');
    issuer.published = [key];
    const names = { a: unique('team-a'), b: unique('team-b') };
    const issuers = parseWorkloadIssuers(
      JSON.stringify([
        {
          issuer: issuer.url,
          audience: 'didyma',
          mappings: [
            { value: 'pipeline', workspace: names.a, role: 'user' },
            { value: 'multi', workspace: names.a },
            { value: 'multi', workspace: names.b, role: 'supervisor' },
            { value: 'ghost', workspace: 'no-such-workspace' },
          ],
        },
      ]),
    );
    // A cooldown longer than the test: every fetch of the keys after the first is one an unknown kid caused.
    t = await startTestPlatform({ workloadIssuers: issuers, workloadJwksCooldownSeconds: 3600 });
    teamA = await makeWorkspace(t.platform, [], names.a);
    teamB = await makeWorkspace(t.platform, [], names.b);
  });
  after(async () => {
    await t?.close();
    await issuer?.close();
  });

  it('issues an access token like a client-credentials one, usable on the public API', async () => {
    const reply = await exchange(await issuer.sign(key, { sub: 'pipeline' }));
    expect(reply.status).to.equal(200);
    expect(reply.body).to.include({ issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 900, scope: 'user' });
    const claims = decodeJwt(reply.body.access_token);
    expect(claims).to.include({ token_type: 'access', workspace: teamA.name, workspace_id: teamA.id });
    expect(claims.permissions).to.deep.equal(['user']);
    const verify = await t.auth.get('/api/auth/token/verify', { token: reply.body.access_token });
    expect(verify.body).to.deep.include({ valid: true });
    expect((await t.public.get('/api/model', { token: reply.body.access_token })).status).to.equal(200);
    const user = await t.platform.db('users').where({ id: claims.user_id }).first();
    expect(user).to.include({ is_service: true, password_hash: null });
    // The same workload again: the same service user.
    const again = decodeJwt((await exchange(await issuer.sign(key, { sub: 'pipeline' }))).body.access_token);
    expect(again.user_id).to.equal(claims.user_id);
  });

  it('needs the workspace named when the mappings grant several, and gives that one\'s role', async () => {
    const token = await issuer.sign(key, { sub: 'multi' });
    const unnamed = await exchange(token);
    expect(unnamed.status).to.equal(400);
    expect(unnamed.body.error).to.equal('invalid_target');
    const byAudience = await exchange(token, { audience: teamB.name });
    expect(byAudience.status).to.equal(200);
    expect(byAudience.body.scope).to.equal('user supervisor');
    const byScope = await exchange(token, { scope: `workspace:${teamA.name}` });
    expect(decodeJwt(byScope.body.access_token)).to.include({ workspace: teamA.name });
    const foreign = await exchange(await issuer.sign(key, { sub: 'pipeline' }), { audience: teamB.name });
    expect(foreign.status).to.equal(400);
    expect(foreign.body.error).to.equal('invalid_target');
  });

  it('refuses an unknown issuer, a wrong audience, an expired or not yet valid token and what is no JWT', async () => {
    const other = await new TestWorkloadIssuer().start();
    try {
      const unknown = await exchange(await other.sign(key, { sub: 'pipeline' }));
      expect(unknown.status).to.equal(400);
      expect(unknown.body).to.include({ error: 'invalid_request' });
      expect(unknown.body.error_description).to.contain('not issued by a configured workload issuer');
    } finally {
      await other.close();
    }
    const audience = await exchange(await issuer.sign(key, { sub: 'pipeline', aud: 'someone-else' }));
    expect(audience.status).to.equal(400);
    expect(audience.body.error_description).to.contain('"aud" claim');
    const expired = await exchange(await issuer.sign(key, { sub: 'pipeline' }, Math.floor(Date.now() / 1000) - 60));
    expect(expired.status).to.equal(400);
    expect(expired.body.error_description).to.contain('expired');
    const early = await exchange(await new SignJWT({ iss: issuer.url, aud: 'didyma', sub: 'pipeline' }).setProtectedHeader({ alg: 'RS256', kid: key.kid }).setNotBefore('10m').setExpirationTime('20m').sign(key.privateKey));
    expect(early.status).to.equal(400);
    expect(early.body.error_description).to.contain('not valid yet');
    const garbage = await exchange('not-a-jwt');
    expect(garbage.body).to.include({ error: 'invalid_request' });
    const wrongType = await exchange(await issuer.sign(key, { sub: 'pipeline' }), { subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
    expect(wrongType.body).to.include({ error: 'invalid_request' });
  });

  it('refuses alg none and HS256 keyed with the issuer\'s public key', async () => {
    const payload = { iss: issuer.url, aud: 'didyma', sub: 'pipeline', exp: Math.floor(Date.now() / 1000) + 300 };
    const none = await exchange(`${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(payload)}.`);
    expect(none.status).to.equal(400);
    expect(none.body.error).to.equal('invalid_request');
    const secret = new TextEncoder().encode(JSON.stringify(key.publicJwk));
    const hmac = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: key.kid }).sign(secret);
    const refused = await exchange(hmac);
    expect(refused.status).to.equal(400);
    expect(refused.body.error_description).to.contain('algorithm');
  });

  it('refuses a subject no mapping names (403), and a mapping to a workspace that does not exist', async () => {
    const unmapped = await exchange(await issuer.sign(key, { sub: 'stranger' }));
    expect(unmapped.status).to.equal(403);
    expect(unmapped.body).to.include({ error: 'access_denied' });
    const ghost = await exchange(await issuer.sign(key, { sub: 'ghost' }));
    expect(ghost.status).to.equal(400);
    expect(ghost.body.error).to.equal('invalid_target');
  });

  it('does not fetch the keys again for unknown kids within the cooldown', async () => {
    await exchange(await issuer.sign(key, { sub: 'pipeline' }));
    const before = issuer.jwksFetches;
    const stranger = await issuerKey('unknown-kid');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await exchange(await issuer.sign(stranger, { sub: 'pipeline' }))).status);
    expect(statuses).to.deep.equal([400, 400, 400, 400, 400]);
    // Within the cooldown, unknown kids do not make the keys fetched again.
    expect(issuer.jwksFetches - before).to.equal(0);
  });

  it('stops exchanging once staff deactivate the workload\'s user', async () => {
    const token = await issuer.sign(key, { sub: 'pipeline' });
    const userId = decodeJwt((await exchange(token)).body.access_token).user_id as number;
    await t.platform.db('users').where({ id: userId }).update({ is_active: false });
    try {
      const refused = await exchange(token);
      expect(refused.status).to.equal(403);
    } finally {
      await t.platform.db('users').where({ id: userId }).update({ is_active: true });
    }
  });

  /** A platform of its own with settings of its own, and an issuer of its own mapping `pipeline` to team A. */
  async function ownIssuerPlatform(overrides: Parameters<typeof startTestPlatform>[0]) {
    const own = await new TestWorkloadIssuer().start();
    own.published = [key];
    const issuers = parseWorkloadIssuers(JSON.stringify([{ issuer: own.url, audience: 'didyma', mappings: [{ value: 'pipeline', workspace: teamA.name }] }]));
    return { issuer: own, platform: await startTestPlatform({ workloadIssuers: issuers, ...overrides }) };
  }

  describe('with a short cooldown', () => {
    let short: TestPlatform;
    let rotating: TestWorkloadIssuer;

    before(async () => {
      ({ issuer: rotating, platform: short } = await ownIssuerPlatform({ workloadJwksCooldownSeconds: 1 }));
    });
    after(async () => {
      await short?.close();
      await rotating?.close();
    });

    it('finds a key the issuer rotated in by fetching its keys again on the unknown kid', async () => {
      const form = async (signer: IssuerKey) => ({ grant_type: EXCHANGE, subject_token: await rotating.sign(signer, { sub: 'pipeline' }), subject_token_type: JWT });
      expect((await short.auth.post('/o/token', { form: await form(key) })).status).to.equal(200);
      expect(rotating.jwksFetches).to.equal(1);
      const next = await issuerKey('k2');
      rotating.published = [key, next];
      // The cooldown passes (a wait for jose's clock, not a measurement).
      await until(async () => Date.now() - rotating.lastFetchAt > 1_200, 'the cooldown of the keys');
      const rotated = await short.auth.post('/o/token', { form: await form(next) });
      expect(rotated.status).to.equal(200);
      expect(rotating.jwksFetches).to.equal(2);
    });

    it('refuses a kid that the keys fetched again still lack', async () => {
      await until(async () => Date.now() - rotating.lastFetchAt > 1_200, 'the cooldown of the keys');
      const fetches = rotating.jwksFetches;
      const stranger = await issuerKey('never-published');
      const reply = await short.auth.post('/o/token', { form: { grant_type: EXCHANGE, subject_token: await rotating.sign(stranger, { sub: 'pipeline' }), subject_token_type: JWT } });
      expect(reply.status).to.equal(400);
      expect(reply.body.error_description).to.contain('"kid"');
      expect(rotating.jwksFetches).to.equal(fetches + 1);
    });
  });

  describe('bounds per caller', () => {
    let bounded: TestPlatform;
    let limited: TestWorkloadIssuer;

    before(async () => {
      ({ issuer: limited, platform: bounded } = await ownIssuerPlatform({ loginLimitPerSource: 3 }));
    });
    after(async () => {
      await bounded?.close();
      await limited?.close();
    });

    it('refuses a source past its failed exchanges with 429 before checking its token', async () => {
      const form = (token: string) => ({ form: { grant_type: EXCHANGE, subject_token: token, subject_token_type: JWT } });
      const expired = await limited.sign(key, { sub: 'pipeline' }, Math.floor(Date.now() / 1000) - 60);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await bounded.auth.post('/o/token', form(expired))).status);
      expect(statuses).to.deep.equal([400, 400, 400]);
      const fetches = limited.jwksFetches;
      const locked = await bounded.auth.post('/o/token', form(await limited.sign(key, { sub: 'pipeline' })));
      expect(locked.status).to.equal(429);
      expect(locked.headers.get('retry-after')).to.match(/^\d+$/);
      expect(limited.jwksFetches).to.equal(fetches);
    });

    it('lets staff read and lift that lock as an OAuth client\'s, named issuer:<issuer>', async () => {
      const staff = await makeStaff(bounded);
      const lock = `/api/auth/lockout/client/${encodeURIComponent(`issuer:${limited.url}`)}`;
      const state = await bounded.auth.get(lock, { token: staff.token });
      expect(state.status).to.equal(200);
      expect(state.body.locked_sources).to.equal(1);
      expect((await bounded.auth.delete(lock, { token: staff.token })).status).to.equal(204);
      const form = { form: { grant_type: EXCHANGE, subject_token: await limited.sign(key, { sub: 'pipeline' }), subject_token_type: JWT } };
      expect((await bounded.auth.post('/o/token', form)).status).to.equal(200);
    });
  });
});
