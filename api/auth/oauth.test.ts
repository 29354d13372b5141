import { expect } from 'chai';
import { makeWorkspace, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';

describe('auth server: OAuth 2.0 client credentials', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ loginLimitPerSource: 5, loginLimitPerClient: 100000 });
  });
  after(() => t.close());

  async function app(role: 'user' | 'supervisor' = 'user') {
    const ws = await makeWorkspace(t.platform);
    const created = await t.platform.identity.oauth.create(null, ws.id, { name: 'pipeline', role });
    return { ws, ...created };
  }

  it('issues an access token for form-encoded credentials, usable as a bearer token', async () => {
    const { ws, client_id, client_secret } = await app('supervisor');
    const reply = await t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', client_id, client_secret, workspace: ws.name } });
    expect(reply.status).to.equal(200);
    expect(reply.body).to.include({ token_type: 'Bearer', expires_in: 900, scope: 'user supervisor' });
    const verify = await t.auth.get('/api/auth/token/verify', { token: reply.body.access_token });
    expect(verify.status).to.equal(200);
    expect(verify.body.token_data).to.include({ workspace: ws.name, token_type: 'access' });
    const row = await t.platform.db('oauth_applications').where({ client_id }).first();
    expect(row.client_secret_hash).to.not.equal(client_secret);
  });

  it('accepts HTTP Basic client authentication', async () => {
    const { ws, client_id, client_secret } = await app();
    const basic = Buffer.from(`${client_id}:${client_secret}`).toString('base64');
    const reply = await t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', workspace: ws.name }, headers: { authorization: `Basic ${basic}` } });
    expect(reply.status).to.equal(200);
  });

  it('refuses a wrong secret, another workspace and other grant types with RFC 6749 errors', async () => {
    const { ws, client_id, client_secret } = await app();
    const other = await makeWorkspace(t.platform);
    const wrong = await t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', client_id, client_secret: 'nope', workspace: ws.name } });
    expect(wrong.status).to.equal(401);
    expect(wrong.body).to.include({ error: 'invalid_client' });
    const foreign = await t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', client_id, client_secret, workspace: other.name } });
    expect(foreign.status).to.equal(401);
    const grant = await t.auth.post('/o/token/', { form: { grant_type: 'password', client_id, client_secret } });
    expect(grant.status).to.equal(400);
    expect(grant.body.error).to.equal('unsupported_grant_type');
    const missing = await t.auth.post('/o/token/', { form: { grant_type: 'client_credentials' } });
    expect(missing.body.error).to.equal('invalid_request');
  });

  it('stops issuing and accepting tokens when the workspace is disabled or the app deleted', async () => {
    const { ws, client_id, client_secret, application } = await app();
    const form = { grant_type: 'client_credentials', client_id, client_secret, workspace: ws.name };
    const token = (await t.auth.post('/o/token/', { form })).body.access_token;
    await t.platform.db('workspaces').where({ id: ws.id }).update({ disabled: true });
    expect((await t.auth.post('/o/token/', { form })).status).to.equal(400);
    expect((await t.auth.get('/api/auth/token/verify', { token })).body).to.deep.include({ valid: false });
    expect((await t.auth.get('/api/auth/workspace', { token })).status).to.equal(401);
    await t.platform.db('workspaces').where({ id: ws.id }).update({ disabled: false });
    expect((await t.auth.get('/api/auth/token/verify', { token })).body).to.deep.include({ valid: true });
    const staffLike = { user: { id: 0, email: '', isStaff: true, isService: false }, workspace: null, permissions: ['staff' as const], via: 'jwt' as const, tokenData: {} };
    await t.platform.identity.oauth.remove(staffLike, ws.id, application.id);
    expect((await t.auth.get('/api/auth/token/verify', { token })).body).to.deep.include({ valid: false });
    expect((await t.auth.get('/api/auth/workspace', { token })).status).to.equal(401);
    expect((await t.auth.post('/o/token/', { form })).status).to.equal(401);
  });

  it('rate limits attempts per client id and source with 429', async () => {
    const { client_id } = await app();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await t.auth.post('/o/token/', { form: { grant_type: 'client_credentials', client_id, client_secret: 'x' } })).status);
    }
    expect(statuses.slice(0, 5)).to.deep.equal([401, 401, 401, 401, 401]);
    expect(statuses[5]).to.equal(429);
  });

  it('cannot be used to log in with a password', async () => {
    const { client_id } = await app();
    const row = await t.platform.db('oauth_applications').where({ client_id }).first();
    const user = await t.platform.db('users').where({ id: row.service_user_id }).first();
    const reply = await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: 'anything' } });
    expect(reply.status).to.equal(401);
  });
});
