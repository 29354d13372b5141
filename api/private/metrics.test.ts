import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { login, makeStaff, startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, OPEN_INFERENCE_PROXY, OPEN_INFERENCE_REGISTRY, startDemoModelServer, tenant, upload, colleague, type Tenant } from '../../test/support/fixtures.js';
import { startExecutor } from '../../executor/start.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';

// The real Prometheus is exercised by test/integration/metrics-prometheus.test.ts;
// here a stand-in records the PromQL the server sends and answers what a test asks.

interface Recorded {
  path: string;
  params: Record<string, string>;
}

type Answer = { status: number; body: unknown };

async function startStandIn() {
  const requests: Recorded[] = [];
  let next: Answer | undefined;
  const vector = { status: 'success', data: { resultType: 'vector', result: [{ metric: { workspace: 'w' }, value: [1700000000.5, '2'] }] } };
  const matrix = { status: 'success', data: { resultType: 'matrix', result: [{ metric: { workspace: 'w' }, values: [[1700000000, '1'], [1700000060, '2']] }] } };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    requests.push({ path: url.pathname, params: Object.fromEntries(url.searchParams) });
    const answer = next ?? { status: 200, body: url.pathname.endsWith('query_range') ? matrix : vector };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    last: () => requests.at(-1)!,
    answerNext(answer: Answer | undefined) {
      next = answer;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('private server: metric catalog and queries', () => {
  let t: TestPlatform;
  let prometheus: Awaited<ReturnType<typeof startStandIn>>;
  let a: Tenant;
  let b: Tenant;
  let staff: Awaited<ReturnType<typeof makeStaff>>;
  let staffToken: string;

  before(async () => {
    prometheus = await startStandIn();
    t = await startTestPlatform({ prometheusUrl: prometheus.url });
    a = await tenant(t);
    b = await tenant(t);
    staff = await makeStaff(t);
    staffToken = staff.token;
  });
  after(async () => {
    await t.close();
    await prometheus.close();
  });

  const metric = (path: string, token: string) => t.private.get(`/api/metric${path}`, { token });

  it("lists the catalog's thirteen metrics with their PromQL templates", async () => {
    const reply = await metric('', a.token);
    expect(reply.status).to.equal(200);
    expect(reply.body.map((m: any) => m.name)).to.deep.equal([
      'active_sessions',
      'closed_sessions',
      'total_invocations',
      'total_deployments',
      'total_models',
      'invocation_failure_rate',
      'queued_invocations',
      'in_flight_invocations',
      'queue_wait_seconds',
      'invocation_duration_seconds',
      'invocations_per_second',
      'failed_invocations_per_second',
      'last_model_invocation_duration_seconds',
    ]);
    for (const item of reply.body) {
      expect(item).to.have.all.keys('name', 'description', 'metrics_query', 'required_params', 'optional_params');
      expect(item.metrics_query).to.include('__PARAMS__');
    }
    expect(reply.body.at(-1)).to.deep.include({ required_params: ['model_code', 'model_version'], optional_params: ['success'] });
  });

  it('lets supervisors and staff in, and nobody else', async () => {
    const user = await colleague(t, a, 'user');
    expect((await metric('', user.token)).status).to.equal(403);
    expect((await metric('/active_sessions', user.token)).status).to.equal(403);
    const unbound = (await login(t.auth, a.user)).access;
    expect((await metric('', unbound)).status).to.equal(403);
    expect((await t.private.get('/api/metric')).status).to.equal(401);
    expect((await metric('', staffToken)).status).to.equal(200);
  });

  it("runs an instant query with the caller's workspace and the given labels", async () => {
    const reply = await metric('/active_sessions?model_code=iris&user_id=7', a.token);
    expect(reply.status, reply.text).to.equal(200);
    const expected = `sum by (workspace) (max by (workspace, model_code, model_version, user_id) (didyma_sessions{state="OPEN",workspace="${a.ws.name}",model_code="iris",user_id="7"}))`;
    expect(reply.body).to.deep.equal({ metric: 'active_sessions', query: expected, data: { resultType: 'vector', result: [{ metric: { workspace: 'w' }, value: [1700000000.5, '2'] }] } });
    expect(prometheus.last().path).to.equal('/api/v1/query');
    expect(prometheus.last().params).to.include({ query: expected });
    expect(prometheus.last().params).to.not.have.any.keys('time', 'start', 'end', 'step');
  });

  it('runs a range query when start, end and step are all given', async () => {
    const reply = await metric('/total_models?start=2024-03-01T00:00:00&end=1709251800&step=1m', a.token);
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body.data.resultType).to.equal('matrix');
    expect(reply.body.data.result[0].values).to.have.length(2);
    expect(prometheus.last().path).to.equal('/api/v1/query_range');
    expect(prometheus.last().params).to.include({ start: '1709251200', end: '1709251800', step: '60' });
  });

  it('keeps hostile label values inside their string literal', async () => {
    const hostile = '"} or vector(1) #\\\n';
    const reply = await metric(`/total_invocations?model_code=${encodeURIComponent(hostile)}&status=ERROR`, a.token);
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body.query).to.equal(`sum by (workspace) (didyma_invocations_total{workspace="${a.ws.name}",model_code="\\"} or vector(1) #\\\\\\n",status="ERROR"})`);
  });

  it('never lets a supervisor read another workspace', async () => {
    expect((await metric(`/active_sessions?workspace=${b.ws.name}`, a.token)).status).to.equal(403);
    expect((await metric(`/total_invocations?workspace=${b.ws.name}`, a.token)).status).to.equal(403);
    const own = await metric(`/active_sessions?workspace=${a.ws.name}`, a.token);
    expect(own.status).to.equal(200);
    expect(own.body.query.match(/workspace="/g)).to.have.length(1);
    const hostile = await metric(`/active_sessions?model_code=${encodeURIComponent(`x",workspace="${b.ws.name}`)}`, a.token);
    expect(hostile.body.query).to.include(`workspace="${a.ws.name}",model_code="x\\",workspace=\\"${b.ws.name}"`);
  });

  it("scopes every selector of the queue, latency and throughput figures to the caller's workspace, and to the model named", async () => {
    const selectorsOf: Record<string, number> = { queued_invocations: 2, in_flight_invocations: 2, queue_wait_seconds: 3, invocation_duration_seconds: 3, invocations_per_second: 1, failed_invocations_per_second: 2 };
    for (const [name, count] of Object.entries(selectorsOf)) {
      const reply = await metric(`/${name}`, a.token);
      expect(reply.status, reply.text).to.equal(200);
      const selectors = reply.body.query.match(/didyma_[a-z_]+\{[^}]*\}/g);
      expect(selectors, name).to.have.length(count);
      for (const selector of selectors) expect(selector, name).to.match(new RegExp(`workspace="${a.ws.name}"\\}$`));
      expect((await metric(`/${name}?workspace=${b.ws.name}`, a.token)).status, name).to.equal(403);
      const model = await metric(`/${name}?model_code=iris&model_version=2`, a.token);
      for (const selector of model.body.query.match(/didyma_[a-z_]+\{[^}]*\}/g)) expect(selector, name).to.match(new RegExp(`workspace="${a.ws.name}",model_code="iris",model_version="2"\\}$`));
    }
    expect((await metric('/queued_invocations', a.token)).body.query).to.equal(
      `sum by (workspace) (max by (workspace, model_code, model_version) (didyma_model_invocations_queued{workspace="${a.ws.name}"})) or 0 * max by (workspace) (didyma_models{workspace="${a.ws.name}"})`,
    );
  });

  it("lets staff name any workspace, reads the token's own by default, and refuses an unbound staff token", async () => {
    const named = await metric(`/total_deployments?workspace=${b.ws.name}`, staffToken);
    expect(named.status, named.text).to.equal(200);
    expect(named.body.query).to.include(`workspace="${b.ws.name}"`);
    const unnamed = await metric('/total_deployments', staffToken);
    expect(unnamed.status, unnamed.text).to.equal(200);
    expect(unnamed.body.query).to.include(`workspace="${staff.home.name}"`);
    expect((await metric(`/total_deployments?workspace=${unique('nope')}`, staffToken)).status).to.equal(404);
    const unbound = await metric(`/total_deployments?workspace=${b.ws.name}`, staff.unbound);
    expect(unbound.status).to.equal(403);
    expect(unbound.body.message).to.equal('This endpoint needs a token bound to a workspace: log in with `workspace`.');
  });

  it('answers 404 for an unknown metric and 400 for wrong parameters', async () => {
    const cases: Array<[string, number, RegExp]> = [
      ['/no_such_metric', 404, /No metric no_such_metric/],
      ['/total_invocations?user_id=1', 400, /Unknown parameter user_id/],
      ['/total_invocations?bogus=1', 400, /bogus/],
      ['/last_model_invocation_duration_seconds?model_code=iris', 400, /needs model_version/],
      ['/total_models?start=1000', 400, /needs all of start, end and step/],
      ['/total_models?start=1000&end=2000', 400, /step missing/],
      ['/total_models?start=tomorrow&end=2000&step=1m', 400, /start must be/],
      ['/total_models?start=2000&end=1000&step=1m', 400, /end must not be before start/],
      ['/total_models?start=0&end=100000&step=1s', 400, /at most 11000/],
      ['/total_models?start=0&end=100&step=fast', 400, /step must be/],
      ['/active_sessions?model_code=a&model_code=b', 400, /model_code/],
    ];
    for (const [path, status, message] of cases) {
      const reply = await metric(path, a.token);
      expect(reply.status, path).to.equal(status);
      expect(reply.body.message, path).to.match(message);
    }
  });

  it('answers 502 with a clear message when Prometheus fails', async () => {
    prometheus.answerNext({ status: 422, body: { status: 'error', errorType: 'execution', error: 'query processing would load too many samples' } });
    const refused = await metric('/total_models', a.token);
    expect(refused.status).to.equal(502);
    expect(refused.body.message).to.match(/metrics backend \(Prometheus\) could not run the query.*too many samples/);
    prometheus.answerNext({ status: 200, body: '<html>not prometheus</html>' });
    expect((await metric('/total_models', a.token)).status).to.equal(502);
    prometheus.answerNext(undefined);
  });

  it('answers 502 when Prometheus is unreachable or not configured', async () => {
    const unconfigured = await startTestPlatform();
    const closed = await startStandIn();
    await closed.close();
    const unreachable = await startTestPlatform({ prometheusUrl: closed.url });
    try {
      const x = await tenant(unconfigured);
      const notConfigured = await unconfigured.private.get('/api/metric/total_models', { token: x.token });
      expect(notConfigured.status).to.equal(502);
      expect(notConfigured.body.message).to.match(/not configured.*PROMETHEUS_URL/);
      expect((await unconfigured.private.get('/api/metric', { token: x.token })).status).to.equal(200);
      const down = await unreachable.private.get('/api/metric/total_models', { token: x.token });
      expect(down.status).to.equal(502);
      expect(down.body.message).to.match(/unreachable/);
      expect(down.body.message).to.not.include(closed.url);
    } finally {
      await unconfigured.close();
      await unreachable.close();
    }
  });
});

describe('/metrics of every process', () => {
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: DemoModelServer & { url: string };
  let a: Tenant;
  let version: string;

  before(async () => {
    t = await startTestPlatform();
    executor = await startExecutor(t.platform, { healthPort: 0 });
    version = unique('v');
    demo = await startDemoModelServer(version);
    a = await tenant(t);
    await demoDeployment(t.private, a.token, demo.url);
    const storage = await filesystemStorage(t.private, a.token);
    const card = await upload(t.private, a.token, storage, '# card');
    expect((await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card.file_id) })).status).to.equal(201);
  });
  after(async () => {
    await executor.close();
    await demo.close();
    await t.close();
  });

  const scrape = async (url: string) => {
    const response = await fetch(`${url}/metrics`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  it('serves process figures on every server and the executor, with the didyma_ prefix', async () => {
    for (const url of [t.auth.baseUrl, t.private.baseUrl, t.public.baseUrl, executor.healthUrl!]) {
      const text = await scrape(url);
      expect(text, url).to.match(/^didyma_process_cpu_user_seconds_total \d/m);
      expect(text, url).to.match(/^didyma_nodejs_eventloop_lag_seconds /m);
    }
  });

  it('serves the database figures on the private server only', async () => {
    const model = `/api/model/iris-classifier/version/${version}`;
    const open = (await t.public.post(`${model}/session`, { token: a.token })).body.id;
    const closed = (await t.public.post(`${model}/session`, { token: a.token })).body.id;
    await t.public.patch(`${model}/session/${closed}?state=CLOSED`, { token: a.token });
    expect(open).to.be.a('string');
    const text = await scrape(t.private.baseUrl);
    const series = `workspace="${a.ws.name}",model_code="iris-classifier",model_version="${version}",user_id="${a.user.id}"`;
    expect(text).to.include(`didyma_sessions{${series},state="OPEN"} 1`);
    expect(text).to.include(`didyma_sessions{${series},state="CLOSED"} 1`);
    expect(text).to.include(`didyma_deployments{workspace="${a.ws.name}",proxy_class="${OPEN_INFERENCE_PROXY}",connector_class="${OPEN_INFERENCE_REGISTRY}"} 1`);
    expect(text).to.include(`didyma_models{workspace="${a.ws.name}",model_code="iris-classifier",model_version="${version}"} 1`);
    expect(text).to.match(/^didyma_database_metrics_up 1$/m);
    for (const url of [t.auth.baseUrl, t.public.baseUrl, executor.healthUrl!]) expect(await scrape(url), url).to.not.include('didyma_sessions');
  });

  it('serves per-run figures on the executor only', async () => {
    const model = `/api/model/iris-classifier/version/${version}`;
    const session = (await t.public.post(`${model}/session`, { token: a.token })).body.id;
    const created = await t.public.post(`${model}/session/${session}/invocation`, { token: a.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    const labels = `workspace="${a.ws.name}",model_code="iris-classifier",model_version="${version}"`;
    const total = `didyma_invocations_total{${labels},user_id="${a.user.id}",status="COMPLETED",type="PREDICT"} 1`;
    const wait = `didyma_invocation_queue_wait_seconds_count{${labels}} 1`;
    let text = '';
    // A new series shows 0 for one scrape before its first run: read until the run shows.
    for (let i = 0; i < 200 && !(text.includes(total) && text.includes(wait)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      text = await scrape(executor.healthUrl!);
    }
    expect((await t.public.get(`${model}/session/${session}/invocation/${created.body.id}`, { token: a.token })).body.status).to.equal('COMPLETED');
    expect(text).to.include(total);
    expect(text).to.match(new RegExp(`^didyma_last_invocation_duration_seconds\\{${labels.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},success="true"\\} \\d`, 'm'));
    expect(text).to.include(`didyma_invocation_duration_seconds_count{${labels},type="PREDICT",success="true"} 1`);
    expect(text).to.include(wait);
    for (const url of [t.auth.baseUrl, t.private.baseUrl, t.public.baseUrl]) {
      const other = await scrape(url);
      expect(other, url).to.not.include('didyma_invocations_total');
      expect(other, url).to.not.include('didyma_invocation_queue_wait_seconds');
    }
  });

  it('asks for the metrics token when one is configured', async () => {
    const guarded = await startTestPlatform({ metricsToken: 'scrape-secret' });
    try {
      expect((await fetch(`${guarded.private.baseUrl}/metrics`)).status).to.equal(401);
      expect((await fetch(`${guarded.private.baseUrl}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).to.equal(401);
      expect((await fetch(`${guarded.private.baseUrl}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } })).status).to.equal(200);
    } finally {
      await guarded.close();
    }
  });
});
