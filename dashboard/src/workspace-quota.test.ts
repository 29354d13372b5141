import { expect } from 'chai';
import { PASSWORD, login, makeUser, makeWorkspace, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { demoDeployment, queuedPredict, registeredIris, sessionIn, startDemoModelServer, tenant } from '../../test/support/fixtures.js';
import { invocationState } from '../../features/invocations/state.js';
import { DashboardClient } from '../../test/support/dashboard-client.js';

describe('dashboard: weights and limits', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  async function signedIn(options: { staff: boolean }) {
    const user = await makeUser(t.platform, { staff: options.staff });
    const ws = await makeWorkspace(t.platform, [[user, 'supervisor']]);
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(user.email, PASSWORD, ws.name);
    return { user, ws, client };
  }

  it('lets staff see every workspace’s weight and limits and change them, a mistake changing nothing', async () => {
    const { client } = await signedIn({ staff: true });
    const target = await makeWorkspace(t.platform);
    const quota = () => t.platform.identity.workspaces.quotas([target.id]).then((quotas) => quotas.get(target.id));

    const list = await client.get('/dashboard/workspaces');
    expect(list.text).to.contain('<th scope="col">Weight</th>').and.contain('0 / any in flight<br>0 / any queued');
    expect(list.text).to.contain(`href="/dashboard/workspaces/${target.id}/quota"`);

    const form = await client.get(`/dashboard/workspaces/${target.id}/quota`);
    expect(form.status).to.equal(200);
    expect(form.text).to.contain('<label for="field-share_weight">Weight</label>');

    const wrong = await client.post(`/dashboard/workspaces/${target.id}/quota`, { share_weight: '0', max_in_flight: 'lots', max_queued: '' }, form);
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.contain('share_weight: a whole number from 1 to 1000.').and.contain('max_in_flight: a whole number of at least 1');
    expect(wrong.text).to.contain('value="lots"');
    expect(await quota()).to.deep.equal({ share_weight: 1, max_in_flight: null, max_queued: null });

    const saved = await client.post(`/dashboard/workspaces/${target.id}/quota`, { share_weight: '3', max_in_flight: '4', max_queued: '' }, form);
    expect(saved.status).to.equal(303);
    expect(saved.location).to.equal('/dashboard/workspaces?notice=workspace-quota-set');
    expect(await quota()).to.deep.equal({ share_weight: 3, max_in_flight: 4, max_queued: null });
    expect((await client.get('/dashboard/workspaces')).text).to.contain('0 / 4 in flight<br>0 / any queued');
  });

  it('shows beside each limit what the workspace uses of it now', async () => {
    const { client } = await signedIn({ staff: true });
    const owner = await tenant(t);
    const version = unique('v');
    const demo = await startDemoModelServer(version);
    const modelId = await registeredIris(t, owner, demo.url, version).finally(() => demo.close());
    await t.platform.identity.workspaces.setQuota(owner.ws.id, { share_weight: 1, max_in_flight: 10, max_queued: null });
    const sessionId = await sessionIn(t.platform.db, { workspaceId: owner.ws.id, userId: owner.user.id, modelId });
    const queued = Array.from({ length: 5 }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }));
    await invocationState.appendQueued(t.platform.db, queued);
    // As a claim leaves them: no executor runs here.
    await t.platform.db('invocations').whereIn('id', queued.slice(0, 3).map((q) => q.id)).update({ status: 'IN_PROGRESS', lease_expires_at: t.platform.db.raw(`now() + interval '1 hour'`) });

    const row = /<tr><td>([^<]+)<\/td>.*?<\/tr>/gs;
    const rows = [...(await client.get('/dashboard/workspaces')).text.matchAll(row)].filter((m) => m[1] === owner.ws.name);
    expect(rows).to.have.length(1);
    expect(rows[0]![0]).to.contain('3 / 10 in flight<br>2 / any queued');
  });

  it('keeps the limits pages from supervisors who are not staff', async () => {
    const { client, ws } = await signedIn({ staff: false });
    expect((await client.get(`/dashboard/workspaces/${ws.id}/quota`)).status).to.equal(403);
    const home = await client.get('/dashboard');
    expect((await client.post(`/dashboard/workspaces/${ws.id}/quota`, { share_weight: '1000', max_in_flight: '', max_queued: '' }, home)).status).to.equal(403);
    expect((await t.platform.identity.workspaces.quotas([ws.id])).get(ws.id)).to.include({ share_weight: 1 });
  });

  it('shows each deployment’s limit of calls at once', async () => {
    const { user, ws, client } = await signedIn({ staff: false });
    // Registration checks classes and init only, so no model server needs to listen here.
    const token = (await login(t.auth, user, ws.name)).access;
    await demoDeployment(t.private, token, 'http://127.0.0.1:9', undefined, { max_concurrent_calls: 7 });
    await demoDeployment(t.private, token, 'http://127.0.0.1:9');
    const page = await client.get('/dashboard/deployments');
    expect(page.text).to.contain('Calls at once').and.contain('<td>7</td>').and.contain('no limit');
  });
});
