import { expect } from 'chai';
import { PASSWORD, makeUser, makeWorkspace, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { DashboardClient } from '../../test/support/dashboard-client.js';

describe('dashboard audit trail', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  async function member(role: 'user' | 'supervisor', ws?: { id: number; name: string }) {
    const user = await makeUser(t.platform);
    const workspace = ws ?? (await makeWorkspace(t.platform));
    await t.platform.db('memberships').insert({ user_id: user.id, workspace_id: workspace.id, role });
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(user.email, PASSWORD, workspace.name);
    return { user, ws: workspace, client };
  }

  it("records the dashboard's forms, and lists a supervisor its workspace's records", async () => {
    const { user, ws, client } = await member('supervisor');
    const page = await client.get('/dashboard/tokens');
    expect((await client.post('/dashboard/tokens', { name: 'ci', expiration_date: '2999-01-01' }, page)).status).to.equal(200);
    await t.platform.audit.drain();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await t.platform.audit.drain();
    const row = await t.platform.db('audit_records').where({ action: 'dashboard:POST /tokens', actor_user_id: user.id }).first();
    expect(row).to.include({ workspace_id: ws.id, outcome: 200, actor_type: 'user', method: 'POST', path: '/dashboard/tokens' });
    expect(await t.platform.db('audit_records').where({ action: 'dashboard:POST /sign-in' }).where('created_at', '>=', new Date(Date.now() - 60_000)).first()).to.not.equal(undefined);

    const trail = await client.get('/dashboard/audit?action=dashboard%3APOST+%2Ftokens');
    expect(trail.status).to.equal(200);
    expect(trail.text).to.contain('Audit trail').and.contain('dashboard:POST /tokens').and.contain(row.request_id);
    expect(trail.text).to.contain('1 record matches.');
  });

  it('names the platform as the actor of what it did by itself', async () => {
    const { ws, client } = await member('supervisor');
    const requestId = 'platform-registration';
    await t.platform.db('audit_records').insert({ id: crypto.randomUUID(), actor_type: 'platform', actor_id: 'kserve-revisions', workspace_id: ws.id, action: 'registerModel', method: 'POST', path: '/api/platform_model', outcome: 201, request_id: requestId });
    const trail = await client.get('/dashboard/audit?action=registerModel');
    expect(trail.text).to.contain(requestId).and.contain('platform <span class="muted nowrap">(kserve-revisions)</span>');
  });

  it("hides other workspaces' records from a supervisor and the page from a plain member", async () => {
    const other = await member('supervisor');
    const requestId = 'other-workspace-request';
    await t.platform.db('audit_records').insert({ id: crypto.randomUUID(), actor_type: 'user', actor_user_id: other.user.id, workspace_id: other.ws.id, action: 'deleteDeployment', method: 'DELETE', path: '/api/deployment/x', outcome: 204, request_id: requestId });
    const { client } = await member('supervisor');
    expect((await client.get('/dashboard/audit')).text).to.not.contain(requestId);
    const plain = await member('user');
    expect((await plain.client.get('/dashboard/audit')).status).to.equal(403);
  });
});
