import { expect } from 'chai';
import { login, makeUser, makeWorkspace, startTestPlatform, type TestPlatform, type TestUser } from '../../test/support/platform.js';

const tomorrow = () => new Date(Date.now() + 86400_000).toISOString().slice(0, 10);

describe('auth server: API tokens', () => {
  let t: TestPlatform;
  let supervisor: TestUser;
  let ws: { id: number; name: string };
  let token: string;

  before(async () => {
    t = await startTestPlatform({ exposeTokenApi: true });
    supervisor = await makeUser(t.platform);
    ws = await makeWorkspace(t.platform, [[supervisor, 'supervisor']]);
    token = (await login(t.auth, supervisor, ws.name)).access;
  });
  after(() => t.close());

  const principal = async () => t.platform.authenticator.authenticate(token);

  it('authenticates a created API token as Bearer and records its last use', async () => {
    const created = await t.platform.identity.apiTokens.create(await principal(), ws.id, { name: 'ci', expiration_date: tomorrow() });
    expect(created.key).to.match(/^dy_[A-Za-z0-9_-]{43}$/);
    expect(created.token).to.not.have.property('key');
    const verify = await t.auth.get('/api/auth/token/verify', { token: created.key });
    expect(verify.status).to.equal(200);
    expect(verify.body.token_data).to.include({ token_type: 'api_token', workspace: ws.name, user_id: supervisor.id });

    const listed = await t.auth.get(`/api/auth/workspace/${ws.id}/token`, { token });
    expect(listed.status).to.equal(200);
    const item = listed.body.find((x: { id: number }) => x.id === created.token.id);
    expect(item).to.include({ name: 'ci', is_active: true, expiration_date: tomorrow() });
    expect(item.last_used).to.be.a('string');
    expect(JSON.stringify(listed.body)).to.not.include(created.key);
    const row = await t.platform.db('api_tokens').where({ id: created.token.id }).first();
    expect(row.token_hash).to.not.equal(created.key);
    expect(row.token_hash).to.have.length(64);
  });

  it('revokes and re-enables with PATCH, deletes with DELETE', async () => {
    const created = await t.platform.identity.apiTokens.create(await principal(), ws.id, { name: 'rotate', expiration_date: tomorrow() });
    const path = `/api/auth/workspace/${ws.id}/token/${created.token.id}`;
    const revoked = await t.auth.patch(path, { token, json: { is_active: false } });
    expect(revoked.status).to.equal(200);
    expect(revoked.body.is_active).to.equal(false);
    const inspected = await t.auth.get('/api/auth/token/verify', { token: created.key });
    expect(inspected.status).to.equal(200);
    expect(inspected.body).to.deep.include({ valid: false });
    expect(inspected.body.token_data).to.include({ token_type: 'api_token', user_id: supervisor.id });
    const refused = await t.auth.get('/api/auth/workspace', { token: created.key });
    expect(refused.status).to.equal(401);
    expect(refused.body.message).to.match(/revoked/);

    await t.auth.patch(path, { token, json: { is_active: true } });
    expect((await t.auth.get('/api/auth/token/verify', { token: created.key })).body.valid).to.equal(true);
    expect((await t.auth.get(path, { token })).body.is_active).to.equal(true);

    expect((await t.auth.delete(path, { token })).status).to.equal(204);
    expect((await t.auth.get(path, { token })).status).to.equal(404);
    expect((await t.auth.get('/api/auth/token/verify', { token: created.key })).status).to.equal(401);
    expect((await t.auth.patch(path, { token, json: {} })).status).to.equal(400);
  });

  it('refuses an expired API token', async () => {
    const created = await t.platform.identity.apiTokens.create(await principal(), ws.id, { name: 'old', expiration_date: tomorrow() });
    await t.platform.db('api_tokens').where({ id: created.token.id }).update({ expiration_date: '2020-01-01' });
    expect((await t.auth.get('/api/auth/token/verify', { token: created.key })).body).to.deep.include({ valid: false });
    const reply = await t.auth.get('/api/auth/workspace', { token: created.key });
    expect(reply.status).to.equal(401);
    expect(reply.body.message).to.match(/expired/);
  });

  it('keeps tokens of one workspace invisible from another (404) and from plain users (403)', async () => {
    const created = await t.platform.identity.apiTokens.create(await principal(), ws.id, { name: 'mine', expiration_date: tomorrow() });
    const stranger = await makeUser(t.platform);
    const otherWs = await makeWorkspace(t.platform, [[stranger, 'supervisor']]);
    const strangerToken = (await login(t.auth, stranger, otherWs.name)).access;
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}/token`, { token: strangerToken })).status).to.equal(404);
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}/token/${created.token.id}`, { token: strangerToken })).status).to.equal(404);
    expect((await t.auth.get(`/api/auth/workspace/${otherWs.id}/token/${created.token.id}`, { token: strangerToken })).status).to.equal(404);
    expect((await t.auth.delete(`/api/auth/workspace/${ws.id}/token/${created.token.id}`, { token: strangerToken })).status).to.equal(404);

    const member = await makeUser(t.platform);
    await t.platform.db('memberships').insert({ user_id: member.id, workspace_id: ws.id, role: 'user' });
    const memberToken = (await login(t.auth, member, ws.name)).access;
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}/token`, { token: memberToken })).status).to.equal(403);
  });

  it('stops an API token when its user leaves the workspace', async () => {
    const user = await makeUser(t.platform);
    await t.platform.db('memberships').insert({ user_id: user.id, workspace_id: ws.id, role: 'supervisor' });
    const userPrincipal = await t.platform.authenticator.authenticate((await login(t.auth, user, ws.name)).access);
    const created = await t.platform.identity.apiTokens.create(userPrincipal, ws.id, { name: 'leaver', expiration_date: tomorrow() });
    expect((await t.auth.get('/api/auth/token/verify', { token: created.key })).status).to.equal(200);
    await t.platform.db('memberships').where({ user_id: user.id, workspace_id: ws.id }).delete();
    expect((await t.auth.get('/api/auth/token/verify', { token: created.key })).body).to.deep.include({ valid: false });
    expect((await t.auth.get('/api/auth/workspace', { token: created.key })).status).to.equal(401);
  });
});

describe('auth server: API-token endpoints when not exposed', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  it('does not mount them (404) and leaves them out of the OpenAPI document', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const token = (await login(t.auth, user, ws.name)).access;
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}/token`, { token })).status).to.equal(404);
    const doc = await t.auth.get('/openapi.json');
    expect(Object.keys(doc.body.paths).some((p) => p.includes('/token/{tokenId}'))).to.equal(false);
  });
});
