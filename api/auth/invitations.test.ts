import { expect } from 'chai';
import { login, makeStaff, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';

const STRONG = 'Sufficiently-Long-Pass-42';

describe('auth server: invitations and registration', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ dashboardUrl: 'https://mp.example.test/dashboard' });
  });
  after(() => t.close());

  async function supervisorOf() {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    return { user, ws, token: (await login(t.auth, user, ws.name)).access };
  }

  const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
  const registration = (token: string, extra: Record<string, unknown> = {}) => ({
    token,
    name: 'Ada',
    surname: 'Lovelace',
    password: STRONG,
    preferred_language: 'en',
    accept_terms: true,
    accept_privacy: true,
    ...extra,
  });

  it('lets an invited user register once, then log in to the workspace', async () => {
    const { ws, token } = await supervisorOf();
    const email = `${unique('new')}@example.test`;
    const invited = await t.auth.post('/api/auth/invitation', { token, json: { email, role: 'user' } });
    expect(invited.status).to.equal(201);
    expect(invited.body).to.include({ email, workspace: ws.name, role: 'user' });
    expect(invited.body.invitation_url).to.match(/^https:\/\/mp\.example\.test\/dashboard\/register\?token=/);
    const invitationToken = tokenOf(invited.body.invitation_url);

    const described = await t.auth.get(`/api/auth/invitation/${invitationToken}`);
    expect(described.status).to.equal(200);
    expect(described.body).to.include({ email, workspace: ws.name, role: 'user', registered: false });
    expect(described.body.workspaces).to.deep.equal([ws.name]);

    const registered = await t.auth.post('/api/auth/register', { json: registration(invitationToken) });
    expect(registered.status).to.equal(201);
    expect(registered.body.workspaces).to.deep.equal([{ workspace: ws.name, role: 'user' }]);

    const tokens = await login(t.auth, { id: registered.body.id, email, password: STRONG }, ws.name);
    const verify = await t.auth.get('/api/auth/token/verify', { token: tokens.access });
    expect(verify.body.token_data.permissions).to.deep.equal(['user']);

    const twice = await t.auth.post('/api/auth/register', { json: registration(invitationToken) });
    expect(twice.status).to.equal(410);
    expect(twice.body.message_code).to.equal('invitation_used');
    expect((await t.auth.get(`/api/auth/invitation/${invitationToken}`)).status).to.equal(410);
  });

  it('joins every workspace the e-mail was invited to at registration', async () => {
    const a = await supervisorOf();
    const b = await supervisorOf();
    const email = `${unique('multi')}@example.test`;
    const first = await t.auth.post('/api/auth/invitation', { token: a.token, json: { email, role: 'supervisor' } });
    await t.auth.post('/api/auth/invitation', { token: b.token, json: { email, role: 'user' } });
    const described = await t.auth.get(`/api/auth/invitation/${tokenOf(first.body.invitation_url)}`);
    expect(described.body.workspaces).to.have.members([a.ws.name, b.ws.name]);
    const registered = await t.auth.post('/api/auth/register', { json: registration(tokenOf(first.body.invitation_url)) });
    expect(registered.body.workspaces).to.have.deep.members([
      { workspace: a.ws.name, role: 'supervisor' },
      { workspace: b.ws.name, role: 'user' },
    ]);
  });

  it('has an already registered user accept instead of registering', async () => {
    const { ws, token } = await supervisorOf();
    const existing = await makeUser(t.platform);
    const invited = await t.auth.post('/api/auth/invitation', { token, json: { email: existing.email.toUpperCase(), role: 'user' } });
    const invitationToken = tokenOf(invited.body.invitation_url);
    expect((await t.auth.get(`/api/auth/invitation/${invitationToken}`)).body.registered).to.equal(true);
    const refused = await t.auth.post('/api/auth/register', { json: registration(invitationToken) });
    expect(refused.status).to.equal(409);

    const someoneElse = await makeUser(t.platform);
    const wrongUser = await t.auth.post(`/api/auth/invitation/${invitationToken}/accept`, { token: (await login(t.auth, someoneElse)).access });
    expect(wrongUser.status).to.equal(403);

    const unbound = (await login(t.auth, existing)).access;
    const accepted = await t.auth.post(`/api/auth/invitation/${invitationToken}/accept`, { token: unbound });
    expect(accepted.status).to.equal(200);
    expect(accepted.body).to.deep.equal({ workspace: ws.name, role: 'user' });
    expect((await t.auth.post('/api/auth/token/obtain', { json: { email: existing.email, password: existing.password, workspace: ws.name } })).status).to.equal(200);
    expect((await t.auth.post(`/api/auth/invitation/${invitationToken}/accept`, { token: unbound })).status).to.equal(410);
  });

  it('explains expired, revoked and unknown invitations', async () => {
    const { ws, token } = await supervisorOf();
    const invited = await t.auth.post('/api/auth/invitation', { token, json: { email: `${unique('late')}@example.test`, role: 'user' } });
    const invitationToken = tokenOf(invited.body.invitation_url);
    await t.platform.db('invitations').where({ id: invited.body.id }).update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await t.auth.get(`/api/auth/invitation/${invitationToken}`);
    expect(expired.status).to.equal(410);
    expect(expired.body.message).to.match(/expired/);
    expect((await t.auth.post('/api/auth/register', { json: registration(invitationToken) })).status).to.equal(410);

    const other = await t.auth.post('/api/auth/invitation', { token, json: { email: `${unique('rev')}@example.test`, role: 'user' } });
    const pending = await t.auth.get('/api/auth/invitation', { token });
    expect(pending.body.map((i: { id: number }) => i.id)).to.include(other.body.id);
    expect(pending.body[0]).to.not.have.property('invitation_url');
    expect((await t.auth.delete(`/api/auth/invitation/id/${other.body.id}`, { token })).status).to.equal(204);
    expect((await t.auth.get(`/api/auth/invitation/${tokenOf(other.body.invitation_url)}`)).status).to.equal(404);
    expect((await t.auth.get('/api/auth/invitation/not-a-real-token')).status).to.equal(404);
    expect(ws.name).to.be.a('string');
  });

  it('validates the registration form', async () => {
    const { token } = await supervisorOf();
    const email = `${unique('form')}@example.test`;
    const invited = await t.auth.post('/api/auth/invitation', { token, json: { email, role: 'user' } });
    const invitationToken = tokenOf(invited.body.invitation_url);
    const weak = await t.auth.post('/api/auth/register', { json: registration(invitationToken, { password: 'short' }) });
    expect(weak.status).to.equal(400);
    expect(weak.body.message).to.match(/^password:/);
    // Each problem of the password is one item of `details`, in the one shape of every error.
    expect(weak.body.details.length).to.be.greaterThan(0);
    for (const detail of weak.body.details) expect(Object.keys(detail).sort()).to.deep.equal(['field', 'message']);
    expect(weak.body.details.map((detail: { field: string }) => detail.field)).to.include('password');
    const terms = await t.auth.post('/api/auth/register', { json: registration(invitationToken, { accept_terms: false }) });
    expect(terms.status).to.equal(400);
    expect(terms.body.message).to.match(/accept_terms/);
    const language = await t.auth.post('/api/auth/register', { json: registration(invitationToken, { preferred_language: '12' }) });
    expect(language.status).to.equal(400);
    const extra = await t.auth.post('/api/auth/register', { json: { ...registration(invitationToken), is_staff: true } });
    expect(extra.status).to.equal(400);
    expect((await t.auth.post('/api/auth/register', { json: registration(invitationToken) })).status).to.equal(201);
  });

  it('only lets supervisors (own workspace) and staff invite', async () => {
    const user = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[user, 'user']]);
    const plain = (await login(t.auth, user, ws.name)).access;
    expect((await t.auth.post('/api/auth/invitation', { token: plain, json: { email: 'a@b.test', role: 'user' } })).status).to.equal(403);

    const sup = await supervisorOf();
    const foreign = await t.auth.post('/api/auth/invitation', { token: sup.token, json: { email: 'a@b.test', role: 'user', workspace_id: ws.id } });
    expect(foreign.status).to.equal(404);
    const member = await t.auth.post('/api/auth/invitation', { token: sup.token, json: { email: sup.user.email, role: 'user' } });
    expect(member.status).to.equal(409);

    const staffToken = (await makeStaff(t)).token;
    const byStaff = await t.auth.post('/api/auth/invitation', { token: staffToken, json: { email: `${unique('s')}@example.test`, role: 'supervisor', workspace_id: ws.id } });
    expect(byStaff.status).to.equal(201);
  });

  it('offers no self-registration: a register call needs a valid invitation', async () => {
    const reply = await t.auth.post('/api/auth/register', { json: registration('made-up-token') });
    expect(reply.status).to.equal(404);
  });
});
