import { expect } from 'chai';
import { PASSWORD, startTestPlatform, unique, type TestPlatform } from '../../../test/support/platform.js';
import { colleague, startDemoModelServer, workspaceWithIris, type Tenant } from '../../../test/support/fixtures.js';
import { DashboardClient } from '../../../test/support/dashboard-client.js';
import { metricRows } from '../pages/alias-comparison.js';

describe('dashboard: the comparison of the versions behind an alias', () => {
  const version = unique('v');
  const feedback_schema = { type: 'object', properties: { correct: { type: 'boolean' } } };
  let t: TestPlatform;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let owner: Tenant;

  before(async () => {
    [t, demo] = await Promise.all([startTestPlatform(), startDemoModelServer(version)]);
    owner = await workspaceWithIris(t, demo.url, version, { feedback_schema });
    expect((await t.private.put('/api/platform_model/iris-classifier/alias/production', { token: owner.token, json: { version } })).status).to.equal(200);
  });
  after(async () => Promise.all([demo?.close(), t?.close()]));

  /** A session opened on `production` with one prediction (queued 100 ms, ran 1 s) and feedback on it, written at known times. */
  async function ranThroughTheAlias() {
    const opened = await t.public.post('/api/model/iris-classifier/alias/production/session', { token: owner.token });
    expect(opened.status, opened.text).to.equal(201);
    const session = await t.platform.db('sessions').where({ id: opened.body.id }).first();
    const base = Date.now() - 60_000;
    const row = { workspace_id: session.workspace_id, session_id: session.id, user_id: session.user_id, model_id: session.model_id };
    const prediction = crypto.randomUUID();
    await t.platform.db('invocations').insert([
      { ...row, id: prediction, order: 0, type: 'PREDICT', request_type: 'FEATURES', body: '{}', status: 'COMPLETED', created_at: new Date(base), started_at: new Date(base + 100), completed_at: new Date(base + 1_100) },
      { ...row, id: crypto.randomUUID(), order: 1, type: 'DATA_SUBMISSION', request_type: 'FEEDBACK', body: '{"correct": true}', status: 'COMPLETED', related_to: prediction, created_at: new Date(base + 2_000), completed_at: new Date(base + 2_000) },
    ]);
  }

  it('shows each metric beside each version to a member, and says why when it cannot', async () => {
    await ranThroughTheAlias();
    const member = await colleague(t, owner, 'user');
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(member.user.email, PASSWORD, member.ws.name);
    const page = await client.get('/dashboard/aliases?model=iris-classifier&alias=production');
    expect(page.status, page.text).to.equal(200);
    expect(page.text).to.include('href="/dashboard/aliases" aria-current="page"');
    expect(page.text).to.include(`<th scope="col">Version ${version}</th>`);
    expect(page.text).to.match(/<td>invocations<\/td>\s*<td>1<\/td>/);
    expect(page.text).to.match(/<td>run time p50 \/ p99<\/td>\s*<td>1000 \/ 1000 ms<\/td>/);
    // Wilson at 1 of 1: 20.7% to 100%.
    expect(page.text).to.match(/<td>correct \(rate\)<\/td>\s*<td>100.0% \[20.7% – 100.0%\], n = 1<\/td>/);

    expect((await client.get('/dashboard/aliases?model=iris-classifier&alias=never-set')).status).to.equal(404);
    const inverted = await client.get('/dashboard/aliases?model=iris-classifier&alias=production&since=2026-03-10T00:00:00Z&until=2026-03-01T00:00:00Z');
    expect(inverted.status).to.equal(400);
    expect(inverted.text).to.include('since: must be before until.');
    const badTolerance = await client.get('/dashboard/aliases?model=iris-classifier&alias=production&tolerance=-1');
    expect(badTolerance.status).to.equal(400);
    expect(badTolerance.text).to.include('tolerance: a number from 0 to');
  });

  it("shows a shadow version's agreement with the primary, and nothing of it for the others", () => {
    const base = { invocations: 7, outcomes: { completed: 7, error: 0, cancelled: 0, pending: 0 }, errors: 0, queue_wait_ms: { count: 0, p50: null, p99: null }, run_time_ms: { count: 0, p50: null, p99: null }, feedback: { count: 0, properties: [] } };
    const rows = new Map(
      metricRows([
        { ...base, version: '1', agreement: null },
        { ...base, version: '2', agreement: { compared: 7, agreed: 4, rate: 4 / 7, interval: { low: 0.25, high: 0.842 }, truncated: false } },
        { ...base, version: '3', agreement: { compared: 0, agreed: 0, rate: null, interval: null, truncated: false } },
      ]),
    );
    expect(rows.get('agreement with the primary')).to.deep.equal(['–', '4 of 7 (57.1%) [25.0% – 84.2%]', 'no pair compared yet']);
  });
});
