import { expect } from 'chai';
import { METRIC_CATALOG } from '../../features/metrics/catalog.js';
import { PASSWORD, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { DashboardClient } from '../../test/support/dashboard-client.js';
import { registeredIris, startDemoModelServer, tenant, type Tenant } from '../../test/support/fixtures.js';
import { startPrometheusStub } from '../../test/support/prometheus-stub.js';

describe('dashboard metrics page: per model, from 5 minutes, nothing left out', () => {
  let prometheus: Awaited<ReturnType<typeof startPrometheusStub>>;
  let t: TestPlatform;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let owner: Tenant;
  let client: DashboardClient;
  const version = unique('v');

  before(async () => {
    prometheus = await startPrometheusStub();
    t = await startTestPlatform({ prometheusUrl: prometheus.url });
    demo = await startDemoModelServer(version);
    owner = await tenant(t);
    await registeredIris(t, owner, demo.url, version);
    client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(owner.user.email, PASSWORD, owner.ws.name);
  });
  after(async () => {
    await t?.close();
    await demo?.close();
    await prometheus?.close();
  });

  /** The queries the page sent to Prometheus while answering `path`. */
  async function queriesOf(path: string) {
    const before = prometheus.queries.length;
    const page = await client.get(path);
    return { page, queries: prometheus.queries.slice(before) };
  }

  it('offers every model of the workspace and every range from 5 minutes to 7 days', async () => {
    const { page } = await queriesOf('/dashboard/metrics');
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('<option value="" selected>All models (the whole workspace)</option>');
    expect(page.text).to.contain(`<option value="iris-classifier:${version}">`);
    for (const range of ['5m', '15m', '1h', '6h', '24h', '7d']) expect(page.text).to.contain(`<option value="${range}"`);
  });

  it('charts or lists with a reason every metric of the catalog, and the per-model ones once a model is picked', async () => {
    for (const path of ['/dashboard/metrics', `/dashboard/metrics?model=iris-classifier:${version}`]) {
      const { page } = await queriesOf(path);
      for (const { name } of METRIC_CATALOG) {
        const charted = page.text.includes(`id="chart-${name}-title"`);
        const listed = page.text.includes(`<li id="undrawn-${name}">`);
        expect(charted !== listed, `${name} on ${path}: charted ${charted}, listed ${listed}`).to.equal(true);
      }
    }
    const whole = (await queriesOf('/dashboard/metrics')).page.text;
    expect(whole).to.match(/<li id="undrawn-last_model_invocation_duration_seconds">.*choose a model above/);
    expect(whole).to.match(/<li id="undrawn-total_invocations">.*running total/);
    const iris = (await queriesOf(`/dashboard/metrics?model=iris-classifier:${version}`)).page.text;
    expect(iris).to.contain('id="chart-last_model_invocation_duration_seconds-title"');
    for (const name of ['invocation_duration_seconds', 'queue_wait_seconds', 'invocations_per_second', 'failed_invocations_per_second', 'queued_invocations']) {
      expect(iris, name).to.contain(`id="chart-${name}-title">${name} (iris-classifier ${version}, last hour)</title>`);
    }
  });

  it("narrows every query that can be narrowed to the picked model, within the caller's workspace, over 5 minutes", async () => {
    const { page, queries } = await queriesOf(`/dashboard/metrics?model=iris-classifier:${version}&range=5m`);
    expect(page.status).to.equal(200);
    expect(queries).to.have.length(METRIC_CATALOG.length - 1);
    for (const query of queries) {
      for (const selector of query.match(/didyma_[a-z_]+\{[^}]*\}/g)!) expect(selector).to.contain(`workspace="${owner.ws.name}"`);
    }
    const latency = queries.filter((q) => q.includes('didyma_invocation_duration_seconds_bucket'));
    expect(latency).to.have.length(1);
    expect(latency[0]).to.contain(`model_code="iris-classifier",model_version="${version}"`);
    const deployments = queries.find((q) => q.includes('didyma_deployments'))!;
    expect(deployments).to.not.contain('model_code');
    expect(page.text).to.contain('The whole workspace: this metric is not measured per model.');
    expect(page.text).to.contain('last 5 minutes)</title>');
  });

  it('refuses a model that is not one of the workspace', async () => {
    const other = await tenant(t);
    expect((await client.get(`/dashboard/metrics?model=iris-classifier:nope`)).status).to.equal(400);
    expect((await client.get(`/dashboard/metrics?model=${encodeURIComponent(`${other.ws.name}:x`)}`)).status).to.equal(400);
  });
});
