import { expect } from 'chai';
import { sha256 } from '../../../infra/crypto/random.js';
import { PASSWORD, makeUser, makeWorkspace, startTestPlatform, type TestPlatform, type TestUser } from '../../../test/support/platform.js';
import { DashboardSessions } from './sessions.js';

describe('dashboard sessions', () => {
  let t: TestPlatform;
  let clock = Date.now();
  let sessions: DashboardSessions;
  let user: TestUser;
  let ws: { id: number; name: string };

  before(async () => {
    t = await startTestPlatform({}, () => clock);
    const { platform } = t;
    sessions = new DashboardSessions({
      db: platform.db,
      box: platform.box,
      login: platform.identity.login,
      workspaces: platform.identity.workspaces,
      authenticator: platform.authenticator,
      now: platform.now,
      lifetimeSeconds: platform.config.refreshTokenTtl,
    });
  });
  after(() => t.close());
  beforeEach(async () => {
    clock = Date.now();
    user = await makeUser(t.platform);
    ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
  });

  const signIn = (workspace: string | null = ws.name) => sessions.signIn({ email: user.email, password: PASSWORD, workspace }, '203.0.113.1');
  const rowOf = (id: string) => t.platform.db('dashboard_sessions').where('id_hash', sha256(id)).first();

  it('keeps only the hash of the session id and the tokens sealed', async () => {
    const id = await signIn();
    const row = await rowOf(id);
    expect(row.user_id).to.equal(user.id);
    expect(row.workspace_id).to.equal(ws.id);
    expect(await t.platform.db('dashboard_sessions').where('id_hash', id).first()).to.equal(undefined);
    expect(row.tokens_sealed).to.match(/^v1:/);
    // No JWT in clear: every one starts with its header, base64url of '{"alg":'.
    expect(row.tokens_sealed).not.to.contain('eyJhbGciOi');
  });

  it('resumes as the signed-in user with the permissions of the workspace', async () => {
    const principal = await sessions.resume(await signIn());
    expect(principal?.user.email).to.equal(user.email);
    expect(principal?.workspace?.name).to.equal(ws.name);
    expect(principal?.permissions).to.deep.equal(['user', 'supervisor']);
  });

  it('does not look up ids that cannot be session ids', async () => {
    expect(await sessions.resume("' or 1=1 --")).to.equal(null);
    expect(await sessions.resume('A'.repeat(43))).to.equal(null);
  });

  it('refreshes an expired access token once, even for requests arriving together', async () => {
    const id = await signIn();
    const before = (await rowOf(id)).tokens_sealed;
    clock += (t.platform.config.accessTokenTtl + 5) * 1000;
    const principals = await Promise.all([sessions.resume(id), sessions.resume(id), sessions.resume(id)]);
    expect(principals.map((p) => p?.user.id)).to.deep.equal([user.id, user.id, user.id]);
    expect((await rowOf(id)).tokens_sealed).not.to.equal(before);
    expect((await sessions.resume(id))?.user.id).to.equal(user.id);
  });

  it('ends when its lifetime is over', async () => {
    const id = await signIn();
    clock += (t.platform.config.refreshTokenTtl + 5) * 1000;
    expect(await sessions.resume(id)).to.equal(null);
  });

  it('ends at once when the workspace is disabled', async () => {
    const id = await signIn();
    await t.platform.identity.workspaces.setDisabled(ws.id, true);
    expect(await sessions.resume(id)).to.equal(null);
    expect(await rowOf(id)).to.equal(undefined);
  });

  it('lands a user of one workspace in it when no workspace was given, and leaves others to choose', async () => {
    expect((await sessions.resume(await signIn(null)))?.workspace?.name).to.equal(ws.name);
    await makeWorkspace(t.platform, [[user, 'user']]);
    expect((await sessions.resume(await signIn(null)))?.workspace).to.equal(null);
  });

  it('switches to another workspace of the user, and refuses one the user does not belong to', async () => {
    const other = await makeWorkspace(t.platform, [[user, 'user']]);
    const id = await signIn();
    const principal = (await sessions.resume(id))!;
    await sessions.switchWorkspace(id, principal, other.name);
    const switched = await sessions.resume(id);
    expect(switched?.workspace?.name).to.equal(other.name);
    expect(switched?.permissions).to.deep.equal(['user']);
    const foreign = await makeWorkspace(t.platform);
    const refused = await sessions.switchWorkspace(id, switched!, foreign.name).catch((e: Error) => e);
    expect(String(refused)).to.match(/not a member/);
  });

  it('signs out: the session and its refresh token family stop working', async () => {
    const id = await signIn();
    const row = await rowOf(id);
    const { refresh } = t.platform.box.openJson(row.tokens_sealed);
    await sessions.signOut(id);
    expect(await sessions.resume(id)).to.equal(null);
    const refused = await t.platform.identity.login.refresh(refresh!).catch((e: Error) => e);
    expect(String(refused)).to.match(/revoked/);
  });
});
