import { expect } from 'chai';
import { PASSWORD, startTestPlatform, unique, type TestPlatform } from '../../../test/support/platform.js';
import { colleague, filesystemStorage, modelPayload, startDemoModelServer, upload, workspaceWithIris, type Tenant } from '../../../test/support/fixtures.js';
import { DashboardClient, type PageReply } from '../../../test/support/dashboard-client.js';

describe('dashboard: a model’s aliases, their policies and history', function () {
  this.timeout(120_000);
  const [v1, v2, v3] = [unique('v1'), unique('v2'), unique('v3')];
  const feedback_schema = { type: 'object', properties: { correct: { type: 'boolean' } } };
  const list = '/dashboard/aliases/iris-classifier';
  const production = `${list}/production`;
  let t: TestPlatform;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let owner: Tenant;
  let supervisor: DashboardClient;
  let page: PageReply;

  before(async () => {
    [t, demo] = await Promise.all([startTestPlatform(), startDemoModelServer('*')]);
    owner = await workspaceWithIris(t, demo.url, v1, { feedback_schema });
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    for (const version of [v2, v3]) {
      const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, { feedback_schema }) });
      expect(registered.status, registered.text).to.equal(201);
    }
    supervisor = await signedIn(owner);
    page = await supervisor.get(list);
  });
  after(async () => Promise.all([demo?.close(), t?.close()]));

  async function signedIn(who: Tenant): Promise<DashboardClient> {
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(who.user.email, PASSWORD, who.ws.name);
    return client;
  }

  /** Posts a form of the page and follows its redirect. */
  async function submitted(path: string, form: Record<string, string>): Promise<PageReply> {
    const reply = await supervisor.post(path, form, page);
    expect(reply.status, reply.text).to.equal(303);
    return supervisor.get(reply.location!);
  }

  const policyForm = (weights: string, extra: Record<string, string> = {}) => ({ weights, sticky: 'session', shadows: '', min_invocations: '', max_error_rate: '', max_p99_run_ms: '', feedback: '', ...extra });

  it('sets an alias from the list, and shows the service’s 400 with the form as typed', async () => {
    expect((await supervisor.get('/dashboard/models')).text).to.include(`href="${list}" aria-label="Aliases of iris-classifier"`);
    expect((await supervisor.get(list)).text).to.include('This model has no aliases yet.');
    const refused = await supervisor.post(list, { alias: 'staging', version: 'never-registered' }, page);
    expect(refused.status).to.equal(400);
    expect(refused.text).to.include(`version: iris-classifier has no live version never-registered in this workspace.`);
    expect(refused.text).to.include('value="staging"').and.include('value="never-registered"');

    const set = await submitted(list, { alias: 'production', version: v1 });
    expect(set.text).to.include('The alias was set').and.include(`points at version ${v1}`);
    const listed = await supervisor.get(list);
    expect(listed.text).to.include(`href="${production}">production</a>`).and.include(`<td>${v1}</td>`);
    expect(listed.text).to.include('href="/dashboard/aliases?model=iris-classifier&amp;alias=production"');
  });

  it('sets a policy with weights, shadows and guards, and keeps a refused one as typed', async () => {
    const wrongSum = await supervisor.post(`${production}/policy`, policyForm(`${v1}=90\n${v2}=5`), page);
    expect(wrongSum.status).to.equal(400);
    expect(wrongSum.text).to.include('weights: they sum to 95, not 100.').and.include(`${v1}=90\n${v2}=5</textarea>`);
    const malformed = await supervisor.post(`${production}/policy`, policyForm(`${v1} 100`, { shadows: v3 }), page);
    expect(malformed.status).to.equal(400);
    expect(malformed.text).to.include(`weights: line 1 (${v1} 100) is not version=weight.`).and.include(`value="${v3}"`);

    const guarded = policyForm(`${v1}=90\n${v2}=10`, { shadows: v3, min_invocations: '5', max_error_rate: '0.05', feedback: 'correct rate 0.5' });
    const set = await submitted(`${production}/policy`, guarded);
    const summary = `${v1}: 90%, ${v2}: 10%; shadows ${v3}; sticky session; guards: error rate ≤ 0.05, correct rate ≥ 0.5, from 5 invocations`;
    expect(set.text).to.include('The traffic policy was set').and.include(summary).and.match(new RegExp(`<td>${owner.user.email}</td>\\s*<td>policy set</td>`));
    expect((await supervisor.get(list)).text).to.include(summary);
  });

  it('shows a guard’s rollback in the history with its reason', async () => {
    const session = await sessionOn(v2);
    for (let i = 0; i < 5; i++) await failedPrediction(session);
    await t.platform.services.aliasGuards.evaluate();
    const shown = await supervisor.get(production);
    expect(shown.text).to.match(/<td>the guards<\/td>\s*<td>candidate rolled back<\/td>/);
    expect(shown.text).to.include(`${v1}: 100%, ${v2}: 0%`).and.include('<td>error rate 5/5, 95% interval');
  });

  it('promotes the shadow by moving the alias to it, then deletes the policy', async () => {
    const refused = await supervisor.post(production, { version: 'never-registered' }, page);
    expect(refused.status).to.equal(400);
    expect(refused.text).to.include('no live version never-registered').and.include('value="never-registered"');

    const moved = await submitted(production, { version: v3 });
    expect(moved.text).to.include('The alias was moved').and.include(`points at version ${v3}`).and.include(`moved ${v1} → ${v3}`);
    expect(moved.text).to.include(`Traffic policy: ${v3}: 100%, ${v2}: 0%; sticky session`);

    const deleted = await submitted(`${production}/policy/delete`, {});
    expect(deleted.text).to.include('Traffic policy: –').and.include('policy deleted').and.not.include('Delete the policy');
  });

  it('shows a member the pages without forms or history, and refuses them the forms', async () => {
    const member = await signedIn(await colleague(t, owner, 'user'));
    const listed = await member.get(list);
    expect(listed.status).to.equal(200);
    expect(listed.text).to.include(`href="${production}">production</a>`).and.not.include('Set the alias');
    const alias = await member.get(production);
    expect(alias.status).to.equal(200);
    expect(alias.text).to.include('points at version').and.not.include('Set the policy').and.not.include('History');
    for (const [path, form] of [[list, { alias: 'staging', version: v1 }], [production, { version: v2 }], [`${production}/policy`, policyForm(`${v3}=100`)], [`${production}/policy/delete`, {}]] as const) {
      expect((await member.post(path, form, alias)).status, path).to.equal(403);
    }
  });

  it('answers 404 for another workspace’s alias, to its pages and its forms', async () => {
    const other = await workspaceWithIris(t, demo.url, unique('v'));
    const stranger = await signedIn(other);
    const theirs = await stranger.get(list);
    expect(theirs.status).to.equal(200);
    expect(theirs.text).to.include('This model has no aliases yet.');
    expect((await stranger.get(production)).status).to.equal(404);
    for (const [path, form] of [[production, { version: v1 }], [`${production}/policy`, policyForm(`${v1}=100`)], [`${production}/policy/delete`, {}]] as const) {
      expect((await stranger.post(path, form, theirs)).status, path).to.equal(404);
    }
    expect(await t.platform.db('model_aliases').where({ workspace_id: other.ws.id })).to.have.length(0);
  });

  /** A session opened on production that runs `version` (others are opened and left). */
  async function sessionOn(version: string): Promise<string> {
    // At 10% on the candidate, 200 opens all missing it happen once in 10^9.
    for (let i = 0; i < 200; i++) {
      const opened = await t.public.post('/api/model/iris-classifier/alias/production/session', { token: owner.token });
      expect(opened.status, opened.text).to.equal(201);
      if (opened.body.model_key.model_version === version) return opened.body.id as string;
    }
    throw new Error(`no session on ${version}`);
  }

  /** A failed prediction written as the executor would, created now. */
  async function failedPrediction(sessionId: string) {
    const session = await t.platform.db('sessions').where({ id: sessionId }).first();
    const { next_order: order } = (await t.platform.db('sessions').where({ id: sessionId }).increment('next_order', 1).returning('next_order'))[0] as { next_order: number };
    const now = new Date();
    await t.platform.db('invocations').insert({ id: crypto.randomUUID(), workspace_id: session.workspace_id, session_id: sessionId, user_id: session.user_id, model_id: session.model_id, order: order - 1, type: 'PREDICT', request_type: 'FEATURES', body: '{}', status: 'ERROR', created_at: now, started_at: now, completed_at: now });
  }
});
