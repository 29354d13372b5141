import { expect } from 'chai';
import { makeStaff, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import type { Client } from '../../test/support/http.js';

// A staff user acts as staff only through a token bound to a workspace: the
// token of a login without one lists the user's workspaces, verifies itself and
// accepts invitations, and is refused everywhere else, on every server.

describe('a staff token bound to no workspace', () => {
  let t: TestPlatform;
  let staff: Awaited<ReturnType<typeof makeStaff>>;
  let other: { id: number; name: string };

  before(async () => {
    t = await startTestPlatform();
    staff = await makeStaff(t);
    other = await makeWorkspace(t.platform);
  });
  after(() => t.close());

  const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(16, 1)]);
  const logo = () => {
    const form = new FormData();
    form.append('logo', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'logo.png');
    return form;
  };

  /** Every call a staff user might make inside a workspace, by server. */
  const calls = (): Array<[string, Client, string, string, Record<string, unknown>]> => [
    ['auth', t.auth, 'POST', '/api/auth/workspace/', { json: { name: unique('made') } }],
    ['auth', t.auth, 'GET', `/api/auth/workspace/${other.id}`, {}],
    ['auth', t.auth, 'PUT', `/api/auth/workspace/${other.id}`, { json: { disabled: false } }],
    ['auth', t.auth, 'PUT', `/api/auth/workspace/${other.id}/logo`, { multipart: logo() }],
    ['auth', t.auth, 'GET', `/api/auth/workspace/${other.id}/logo`, {}],
    ['auth', t.auth, 'POST', '/api/auth/invitation', { json: { email: `${unique('x')}@example.test`, role: 'supervisor', workspace_id: other.id } }],
    ['auth', t.auth, 'GET', `/api/auth/invitation?workspace_id=${other.id}`, {}],
    ['private', t.private, 'GET', `/api/metric/total_models?workspace=${other.name}`, {}],
    ['private', t.private, 'GET', '/api/deployment', {}],
    ['private', t.private, 'GET', '/api/storage', {}],
    ['public', t.public, 'GET', '/api/model', {}],
  ];

  it('is refused with 403 on every workspace and staff operation of the three servers, saying to log in with a workspace', async () => {
    for (const [server, client, method, path, options] of calls()) {
      const reply = await client.request(method, path, { ...options, token: staff.unbound });
      expect(reply.status, `${server}: ${method} ${path}`).to.equal(403);
      expect(reply.body, `${server}: ${method} ${path}`).to.deep.equal({
        message: 'This endpoint needs a token bound to a workspace: log in with `workspace`.',
        message_code: 'permission_denied',
      });
    }
  });

  it('still lists only the workspaces its user belongs to, and verifies with no permission', async () => {
    const list = await t.auth.get('/api/auth/workspace', { token: staff.unbound });
    expect(list.status).to.equal(200);
    expect(list.body.map((w: { name: string }) => w.name)).to.deep.equal([staff.home.name]);
    const verify = await t.auth.get('/api/auth/token/verify', { token: staff.unbound });
    expect(verify.body).to.deep.include({ valid: true });
    expect(verify.body.token_data).to.include({ workspace: null });
    expect(verify.body.token_data.permissions).to.deep.equal([]);
  });

  it('while the same user, bound to a workspace, acts as staff in any', async () => {
    expect((await t.auth.get(`/api/auth/workspace/${other.id}`, { token: staff.token })).status).to.equal(200);
    expect((await t.auth.put(`/api/auth/workspace/${other.id}/logo`, { token: staff.token, multipart: logo() })).status).to.equal(202);
    const invited = await t.auth.post('/api/auth/invitation', { token: staff.token, json: { email: `${unique('x')}@example.test`, role: 'user', workspace_id: other.id } });
    expect(invited.status, invited.text).to.equal(201);
    expect((await t.auth.get('/api/auth/workspace', { token: staff.token })).body.map((w: { name: string }) => w.name)).to.include(other.name);
    const verify = await t.auth.get('/api/auth/token/verify', { token: staff.token });
    expect(verify.body.token_data.permissions).to.have.members(['user', 'staff']);
  });
});
