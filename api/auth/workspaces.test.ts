import { expect } from 'chai';
import { login, makeStaff, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);

function logoForm(data: Buffer, type: string, field = 'logo') {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(data)], { type }), 'logo.png');
  return form;
}

describe('auth server: workspace management', () => {
  let t: TestPlatform;
  let staffToken: string;
  before(async () => {
    t = await startTestPlatform();
    staffToken = (await makeStaff(t)).token;
  });
  after(() => t.close());

  it('lets staff create, list, get and disable a workspace; the name never changes', async () => {
    const name = unique('team');
    const created = await t.auth.post('/api/auth/workspace/', { token: staffToken, json: { name } });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ name, disabled: false });
    expect(created.body.created_at).to.match(/Z$/);

    const list = await t.auth.get('/api/auth/workspace/', { token: staffToken });
    expect(list.status).to.equal(200);
    expect(list.body.map((w: { name: string }) => w.name)).to.include(name);
    expect(Number(list.headers.get('x-total-count'))).to.be.at.least(1);

    const one = await t.auth.get(`/api/auth/workspace/${created.body.id}`, { token: staffToken });
    expect(one.body).to.deep.equal(created.body);

    const updated = await t.auth.put(`/api/auth/workspace/${created.body.id}`, { token: staffToken, json: { disabled: true } });
    expect(updated.status).to.equal(202);
    expect(updated.body).to.include({ name, disabled: true });
    const renamed = await t.auth.put(`/api/auth/workspace/${created.body.id}`, { token: staffToken, json: { disabled: false, name: 'other' } });
    expect(renamed.status).to.equal(400);
  });

  it('rejects bad names with 400 and duplicates (even of deleted workspaces) with 409', async () => {
    for (const name of ['Upper', 'with space', 'dot.name', '', 'x'.repeat(64), 'ünï']) {
      const reply = await t.auth.post('/api/auth/workspace', { token: staffToken, json: { name } });
      expect(reply.status, name).to.equal(400);
    }
    const name = unique('dup');
    const first = await t.auth.post('/api/auth/workspace', { token: staffToken, json: { name } });
    expect((await t.auth.post('/api/auth/workspace', { token: staffToken, json: { name } })).status).to.equal(409);
    expect((await t.auth.delete(`/api/auth/workspace/${first.body.id}`, { token: staffToken })).status).to.equal(204);
    const again = await t.auth.post('/api/auth/workspace', { token: staffToken, json: { name } });
    expect(again.status).to.equal(409);
    expect(again.body.message_code).to.equal('conflict');
  });

  it('answers 404 for unknown or deleted workspaces and 403 to non-staff', async () => {
    expect((await t.auth.get('/api/auth/workspace/999999', { token: staffToken })).status).to.equal(404);
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const token = (await login(t.auth, user, ws.name)).access;
    expect((await t.auth.post('/api/auth/workspace', { token, json: { name: unique('x') } })).status).to.equal(403);
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}`, { token })).status).to.equal(403);
    expect((await t.auth.put(`/api/auth/workspace/${ws.id}`, { token, json: { disabled: true } })).status).to.equal(403);
    expect((await t.auth.delete(`/api/auth/workspace/${ws.id}`, { token })).status).to.equal(403);
    const own = await t.auth.get('/api/auth/workspace', { token });
    expect(own.body.map((w: { id: number }) => w.id)).to.deep.equal([ws.id]);
  });

  it('disabling stops a workspace token on its next request, enabling restores it, deleting ends it for good', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'user']]);
    const tokens = await login(t.auth, user, ws.name);
    const verify = async () => (await t.auth.get('/api/auth/token/verify', { token: tokens.access })).body.valid as boolean;
    const use = () => t.auth.get('/api/auth/workspace', { token: tokens.access });
    expect(await verify()).to.equal(true);

    await t.auth.put(`/api/auth/workspace/${ws.id}`, { token: staffToken, json: { disabled: true } });
    expect(await verify()).to.equal(false);
    const disabled = await use();
    expect(disabled.status).to.equal(401);
    expect(disabled.body.message).to.match(/disabled/);
    expect((await t.auth.post('/api/auth/token/obtain', { json: { email: user.email, password: user.password, workspace: ws.name } })).status).to.equal(403);

    await t.auth.put(`/api/auth/workspace/${ws.id}`, { token: staffToken, json: { disabled: false } });
    expect(await verify()).to.equal(true);

    await t.auth.delete(`/api/auth/workspace/${ws.id}`, { token: staffToken });
    expect(await verify()).to.equal(false);
    expect((await use()).status).to.equal(401);
    expect((await t.auth.post('/api/auth/token/refresh', { json: { refresh: tokens.refresh } })).status).to.equal(401);
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}`, { token: staffToken })).status).to.equal(404);
    const list = await t.auth.get('/api/auth/workspace?limit=1000', { token: staffToken });
    expect(list.body.map((w: { id: number }) => w.id)).to.not.include(ws.id);
  });

  it('stores and serves a workspace logo for its supervisor, never across workspaces', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const other = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const token = (await login(t.auth, user, ws.name)).access;

    const stored = await t.auth.put(`/api/auth/workspace/${ws.id}/logo`, { token, multipart: logoForm(PNG, 'image/png') });
    expect(stored.status).to.equal(202);
    expect(stored.body).to.deep.equal({ message: 'Logo stored.', message_code: 'ok' });
    const fetched = await fetch(`${t.auth.baseUrl}/api/auth/workspace/${ws.id}/logo`, { headers: { authorization: `Bearer ${token}` } });
    expect(fetched.status).to.equal(200);
    expect(fetched.headers.get('content-type')).to.equal('application/octet-stream');
    expect(Buffer.from(await fetched.arrayBuffer()).equals(PNG)).to.equal(true);

    expect((await t.auth.get(`/api/auth/workspace/${other.id}/logo`, { token })).status).to.equal(404);
    expect((await t.auth.put(`/api/auth/workspace/${other.id}/logo`, { token, multipart: logoForm(PNG, 'image/png') })).status).to.equal(404);
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}/logo`, { token: staffToken })).status).to.equal(200);
  });

  it('refuses oversized, mistyped and missing logos', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const token = (await login(t.auth, user, ws.name)).access;
    const big = Buffer.concat([PNG, Buffer.alloc(1024 * 1024 + 1)]);
    expect((await t.auth.put(`/api/auth/workspace/${ws.id}/logo`, { token, multipart: logoForm(big, 'image/png') })).status).to.equal(413);
    expect((await t.auth.put(`/api/auth/workspace/${ws.id}/logo`, { token, multipart: logoForm(Buffer.from('<svg/>'), 'image/svg+xml') })).status).to.equal(400);
    expect((await t.auth.put(`/api/auth/workspace/${ws.id}/logo`, { token, multipart: logoForm(Buffer.from('not a png'), 'image/png') })).status).to.equal(400);
    expect((await t.auth.put(`/api/auth/workspace/${ws.id}/logo`, { token, multipart: logoForm(PNG, 'image/png', 'other') })).status).to.equal(400);
    const json = await t.auth.put(`/api/auth/workspace/${ws.id}/logo`, { token, json: { logo: 'x' } });
    expect(json.status).to.equal(415);
    expect((await t.auth.get(`/api/auth/workspace/${ws.id}/logo`, { token })).status).to.equal(404);
  });

  it('lets a plain member read but not change the logo', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'user']]);
    const token = (await login(t.auth, user, ws.name)).access;
    const reply = await t.auth.put(`/api/auth/workspace/${ws.id}/logo`, { token, multipart: logoForm(PNG, 'image/png') });
    expect(reply.status).to.equal(403);
  });
});
