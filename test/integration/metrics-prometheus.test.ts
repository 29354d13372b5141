import fs from 'node:fs';
import { expect } from 'chai';
import { makeStaff, startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, OPEN_INFERENCE_PROXY, queuedPredict, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { invocationState } from '../../features/invocations/state.js';
import { requireEnv, serviceScript } from '../support/services.js';
import { startExecutor } from '../../executor/start.js';
import type { DemoModelServer } from '../../demo/model-server/server.js';

// A real Prometheus (scripts/services/prometheus.sh: Debian package, 1 s
// scrapes, file_sd targets) scrapes this process's servers and executor; the
// metric endpoints query it. Each workspace here is fresh, so earlier runs'
// series in Prometheus's storage never match.

type Reply = { status: number; body: any; text: string };

interface Workspace extends Tenant {
  version: string;
}

describe('metrics against a real Prometheus', () => {
  let prometheusUrl: string;
  let targetsFile: string;
  let previousTargets: string | undefined;
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  const demos: DemoModelServer[] = [];
  let a: Workspace;
  let b: Workspace;
  let staffToken: string;

  before(async () => {
    prometheusUrl = requireEnv('TEST_PROMETHEUS_URL', 'prometheus');
    targetsFile = requireEnv('TEST_PROMETHEUS_TARGETS_FILE', 'prometheus');
    t = await startTestPlatform({ prometheusUrl });
    executor = await startExecutor(t.platform, { healthPort: 0 });
    previousTargets = fs.existsSync(targetsFile) ? fs.readFileSync(targetsFile, 'utf8') : undefined;
    writeTargets([t.auth.baseUrl, t.private.baseUrl, t.public.baseUrl, executor.healthUrl!]);

    a = await workspaceWithModels(['iris-classifier', 'always-fails']);
    b = await workspaceWithModels(['iris-classifier']);
    staffToken = (await makeStaff(t)).token;

    // a: three OPEN sessions and one CLOSED; three predictions that complete, one that fails
    const irisA = `/api/model/iris-classifier/version/${a.version}`;
    const first = await openSession(a, irisA);
    const second = await openSession(a, irisA);
    await t.public.patch(`${irisA}/session/${await openSession(a, irisA)}?state=CLOSED`, { token: a.token });
    const failing = `/api/model/always-fails/version/${a.version}`;
    const invocations = [await predict(a, irisA, first), await predict(a, irisA, first), await predict(a, irisA, second), await predict(a, failing, await openSession(a, failing))];
    // b: one OPEN session, one prediction
    const irisB = `/api/model/iris-classifier/version/${b.version}`;
    invocations.push(await predict(b, irisB, await openSession(b, irisB)));
    await Promise.all(invocations.map((wait) => wait()));
  });

  after(async () => {
    if (targetsFile) {
      if (previousTargets === undefined) fs.rmSync(targetsFile, { force: true });
      else writeTargetsFile(previousTargets);
    }
    await executor?.close();
    await Promise.all(demos.map((demo) => demo.close()));
    await t?.close();
  });

  function writeTargets(urls: string[]): void {
    writeTargetsFile(JSON.stringify([{ targets: urls.map((url) => new URL(url).host), labels: { didyma_test_run: String(process.pid) } }]));
  }

  /** The value of one series on the executor's own /metrics, the page Prometheus scrapes. */
  async function exposed(name: string, labels: Record<string, string>): Promise<number> {
    const page = await (await fetch(`${executor.healthUrl}/metrics`)).text();
    const line = page.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([key, value]) => l.includes(`${key}="${value}"`)));
    expect(line, `${name} on the executor's /metrics`).to.be.a('string');
    return Number(line!.split(' ').pop());
  }

  /** Atomically, so Prometheus never reads half a file. */
  function writeTargetsFile(content: string): void {
    const temporary = `${targetsFile}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, content);
    fs.renameSync(temporary, targetsFile);
  }

  /** A supervisor's workspace with a demo deployment serving `codes` under a fresh version, all registered. */
  async function workspaceWithModels(codes: string[]): Promise<Workspace> {
    const version = unique('v');
    const demo = await startDemoModelServer(version);
    demos.push(demo);
    const owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# card');
    for (const code of codes) {
      const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload(code, version, card.file_id) });
      expect(registered.status, registered.text).to.equal(201);
    }
    return { ...owner, version };
  }

  async function openSession(who: Tenant, model: string): Promise<string> {
    const reply = await t.public.post(`${model}/session`, { token: who.token });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.id;
  }

  /** Queues a prediction; the returned function waits until the executor has finished it. */
  async function predict(who: Tenant, model: string, session: string): Promise<() => Promise<void>> {
    const reply = await t.public.post(`${model}/session/${session}/invocation`, { token: who.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(reply.status, reply.text).to.equal(201);
    const path = `${model}/session/${session}/invocation/${reply.body.id}/check_progress`;
    return async () => {
      await eventually(() => t.public.get(path, { token: who.token }), (r) => ['COMPLETED', 'ERROR'].includes(r.body.status), `invocation ${reply.body.id} to finish`);
    };
  }

  const metric = (name: string, token: string, params: Record<string, string> = {}): Promise<Reply> => {
    const query = new URLSearchParams(params).toString();
    return t.private.get(`/api/metric/${name}${query ? `?${query}` : ''}`, { token });
  };

  /** The single value of an instant answer ('' when there is no series). */
  const valueOf = (reply: Reply): string => {
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body.data.resultType).to.equal('vector');
    expect(reply.body.data.result.length, reply.text).to.be.at.most(1);
    return reply.body.data.result[0]?.value[1] ?? '';
  };

  /** The finite values of an instant answer, one per series. */
  const finiteValues = (reply: Reply): number[] => reply.body.data.result.map((r: any) => Number(r.value[1])).filter(Number.isFinite);

  async function eventually(read: () => Promise<Reply>, done: (reply: Reply) => boolean, what: string, timeoutMs = 60_000): Promise<Reply> {
    const deadline = Date.now() + timeoutMs;
    let last: Reply | undefined;
    while (Date.now() < deadline) {
      last = await read();
      if (done(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`timed out waiting for ${what}; last answer: ${last?.status} ${last?.text}`);
  }

  /** Waits until Prometheus has scraped what the database and the executor know now. */
  const scraped = (name: string, token: string, params: Record<string, string>, expected: string) =>
    eventually(() => metric(name, token, params), (reply) => reply.status === 200 && valueOf(reply) === expected, `${name} ${JSON.stringify(params)} = ${expected}`);

  it('answers instant queries with what was created', async () => {
    await scraped('active_sessions', a.token, {}, '3');
    await scraped('total_invocations', a.token, {}, '4');
    const active = await metric('active_sessions', a.token);
    expect(active.body.data.result[0].metric).to.deep.equal({ workspace: a.ws.name });
    expect(valueOf(await metric('active_sessions', a.token, { model_code: 'iris-classifier' }))).to.equal('2');
    expect(valueOf(await metric('active_sessions', a.token, { model_code: 'iris-classifier', user_id: String(a.user.id) }))).to.equal('2');
    expect(valueOf(await metric('closed_sessions', a.token))).to.equal('1');
    expect(valueOf(await metric('total_invocations', a.token, { status: 'COMPLETED' }))).to.equal('3');
    expect(valueOf(await metric('total_invocations', a.token, { status: 'ERROR', type: 'PREDICT' }))).to.equal('1');
    expect(valueOf(await metric('total_invocations', a.token, { model_code: 'always-fails', model_version: a.version }))).to.equal('1');
    expect(valueOf(await metric('total_deployments', a.token))).to.equal('1');
    expect(valueOf(await metric('total_deployments', a.token, { proxy_class: OPEN_INFERENCE_PROXY }))).to.equal('1');
    expect(valueOf(await metric('total_models', a.token))).to.equal('2');
    expect(valueOf(await metric('total_models', a.token, { model_code: 'always-fails' }))).to.equal('1');
  });

  it('gives the failure rate as a percentage and the last duration by success', async () => {
    await scraped('total_invocations', a.token, {}, '4');
    expect(valueOf(await metric('invocation_failure_rate', a.token))).to.equal('25');
    expect(valueOf(await metric('invocation_failure_rate', a.token, { model_code: 'iris-classifier' }))).to.equal('0');
    expect(valueOf(await metric('invocation_failure_rate', a.token, { model_code: 'always-fails' }))).to.equal('100');

    const model = { model_code: 'iris-classifier', model_version: a.version };
    const both = await metric('last_model_invocation_duration_seconds', a.token, model);
    expect(both.body.data.result.map((r: any) => r.metric.success)).to.deep.equal(['true']);
    const succeeded = await metric('last_model_invocation_duration_seconds', a.token, { ...model, success: 'true' });
    // What the executor measured and exposes, exactly, rather than a plausible range of wall time.
    const measured = await exposed('didyma_last_invocation_duration_seconds', { workspace: a.ws.name, ...model, success: 'true' });
    expect(measured).to.be.greaterThan(0);
    expect(Number(valueOf(succeeded))).to.equal(measured);
    expect(succeeded.body.data.result[0].metric).to.deep.equal({ workspace: a.ws.name, ...model, success: 'true' });
    expect(valueOf(await metric('last_model_invocation_duration_seconds', a.token, { ...model, success: 'false' }))).to.equal('');
    const failed = await metric('last_model_invocation_duration_seconds', a.token, { model_code: 'always-fails', model_version: a.version, success: 'false' });
    expect(Number(valueOf(failed))).to.be.greaterThan(0);
    expect((await metric('last_model_invocation_duration_seconds', a.token, { model_code: 'iris-classifier' })).status).to.equal(400);
  });

  it('answers range queries as a matrix, with start and end as UNIX time or YYYY-MM-DDTHH:MM:SS', async () => {
    await scraped('active_sessions', a.token, {}, '3');
    // Not before the instant query that saw the value, so the last point sees it too.
    const end = Math.ceil(Date.now() / 1000);
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 19);
    for (const [start, stop] of [[String(end - 60), String(end)], [iso(end - 60), iso(end)]] as const) {
      const reply = await metric('active_sessions', a.token, { start, end: stop, step: '5s' });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.data.resultType).to.equal('matrix');
      const [series] = reply.body.data.result;
      expect(series.metric).to.deep.equal({ workspace: a.ws.name });
      const values: Array<[number, string]> = series.values;
      expect(values.length).to.be.within(1, 13);
      expect(values.at(-1)).to.deep.equal([end, '3']);
      for (const [time] of values) expect((end - time) % 5).to.equal(0);
    }
    const range = await metric('total_invocations', a.token, { start: String(end - 30), end: String(end), step: '1s' });
    expect(range.body.data.result[0].values.at(-1)[1]).to.equal('4');
  });

  it("never shows a workspace another workspace's series, whatever it passes", async () => {
    await scraped('total_invocations', b.token, {}, '1');
    await scraped('active_sessions', b.token, {}, '1');
    for (const name of ['active_sessions', 'total_invocations', 'total_models', 'invocation_failure_rate']) {
      expect((await metric(name, a.token, { workspace: b.ws.name })).status, name).to.equal(403);
    }
    // b's model, named by a: nothing
    expect(valueOf(await metric('total_invocations', a.token, { model_code: 'iris-classifier', model_version: b.version }))).to.equal('');
    expect(valueOf(await metric('active_sessions', a.token, { model_version: b.version }))).to.equal('');
    expect((await metric('last_model_invocation_duration_seconds', a.token, { model_code: 'iris-classifier', model_version: b.version })).body.data.result).to.deep.equal([]);
    // a value trying to widen the selector to b
    const widened = await metric('active_sessions', a.token, { model_code: `x"} or didyma_sessions{workspace="${b.ws.name}` });
    expect(valueOf(widened)).to.equal('');
    // each sees its own numbers; staff may name either
    expect(valueOf(await metric('total_invocations', b.token))).to.equal('1');
    expect(valueOf(await metric('total_invocations', staffToken, { workspace: b.ws.name }))).to.equal('1');
    expect(valueOf(await metric('total_invocations', staffToken, { workspace: a.ws.name }))).to.equal('4');
    // Naming none, staff read the token's own workspace, which has no invocation.
    const own = await metric('total_invocations', staffToken);
    expect(own.status).to.equal(200);
    expect(valueOf(own)).to.equal('');
  });

  it("counts each workspace's queue and calls in flight, and times its queue waits, for that workspace only", async () => {
    const db = t.platform.db;
    const irisA = `/api/model/iris-classifier/version/${a.version}`;
    const session = await openSession(a, irisA);
    const modelId = ((await db('models').where({ model_code: 'iris-classifier', version: a.version }).first('id')) as { id: number }).id;
    const rows = Array.from({ length: 3 }, () => queuedPredict({ workspaceId: a.ws.id, sessionId: session, userId: a.user.id, modelId }));
    const ids = (await invocationState.appendQueued(db, rows)).map((row) => row!.id);
    try {
      // Out of the executor's reach while Prometheus reads them: one running under a long lease, two in a long backoff.
      await db('invocations').where('id', ids[0]).update({ status: 'IN_PROGRESS', started_at: db.fn.now(), attempts: 1, lease_expires_at: db.raw(`now() + interval '1 hour'`) });
      await db('invocations').whereIn('id', ids.slice(1)).update({ available_at: db.raw(`now() + interval '1 hour'`) });
      await scraped('queued_invocations', a.token, {}, '2');
      await scraped('in_flight_invocations', a.token, {}, '1');
      expect((await metric('queued_invocations', a.token)).body.data.result[0].metric).to.deep.equal({ workspace: a.ws.name });
      // Per model version: the iris queue, and 0 for a live model with nothing waiting.
      expect(valueOf(await metric('queued_invocations', a.token, { model_code: 'iris-classifier', model_version: a.version }))).to.equal('2');
      expect(valueOf(await metric('in_flight_invocations', a.token, { model_code: 'iris-classifier', model_version: a.version }))).to.equal('1');
      expect(valueOf(await metric('queued_invocations', a.token, { model_code: 'always-fails', model_version: a.version }))).to.equal('0');
      expect(valueOf(await metric('queued_invocations', a.token, { model_code: 'iris-classifier', model_version: b.version }))).to.equal('');
      // b has live models and nothing waiting: 0, not no data.
      expect(valueOf(await metric('queued_invocations', b.token))).to.equal('0');
      expect(valueOf(await metric('queued_invocations', staffToken, { workspace: a.ws.name }))).to.equal('2');
      expect((await metric('in_flight_invocations', a.token, { workspace: b.ws.name })).status).to.equal(403);
    } finally {
      await db('invocations').whereIn('id', ids).delete();
    }
    await scraped('queued_invocations', a.token, {}, '0');

    // A rate needs an increase Prometheus saw: the series exist since the first runs, so one more run makes one.
    await (await predict(a, irisA, session))();
    const waits = await eventually(
      () => metric('queue_wait_seconds', a.token),
      (reply) => reply.status === 200 && reply.body.data.result.length === 3 && reply.body.data.result.every((r: any) => Number.isFinite(Number(r.value[1]))),
      'the three quantiles of the queue wait',
    );
    expect(waits.body.data.result.map((r: any) => r.metric).sort((x: any, y: any) => x.quantile.localeCompare(y.quantile))).to.deep.equal([
      { workspace: a.ws.name, quantile: '0.5' },
      { workspace: a.ws.name, quantile: '0.95' },
      { workspace: a.ws.name, quantile: '0.99' },
    ]);
    const [median, p95, p99] = ['0.5', '0.95', '0.99'].map((q) => Number(waits.body.data.result.find((r: any) => r.metric.quantile === q).value[1]));
    expect(median).to.be.within(0, p95!);
    expect(p95).to.be.within(median!, p99!);
    expect(p99).to.be.below(60);
    expect((await metric('queue_wait_seconds', a.token, { workspace: b.ws.name })).status).to.equal(403);
    for (const r of (await metric('queue_wait_seconds', staffToken, { workspace: b.ws.name })).body.data.result) expect(r.metric.workspace).to.equal(b.ws.name);

    // The same run, per model version: its latencies and the throughput, and nothing for a model of b.
    const iris = { model_code: 'iris-classifier', model_version: a.version };
    for (const name of ['queue_wait_seconds', 'invocation_duration_seconds']) {
      const quantiles = await eventually(() => metric(name, a.token, iris), (reply) => reply.status === 200 && finiteValues(reply).length === 3, `the quantiles of ${name} for iris`);
      expect(quantiles.body.data.result.map((r: any) => r.metric.quantile).sort(), name).to.deep.equal(['0.5', '0.95', '0.99']);
      expect(finiteValues(quantiles).every((value) => value >= 0), name).to.equal(true);
      expect((await metric(name, a.token, { ...iris, model_version: b.version })).body.data.result, name).to.deep.equal([]);
    }
    const throughput = await eventually(() => metric('invocations_per_second', a.token, iris), (reply) => reply.status === 200 && Number(valueOf(reply)) > 0, 'a throughput for iris');
    expect(throughput.body.data.result[0].metric).to.deep.equal({ workspace: a.ws.name });
    expect(valueOf(await metric('failed_invocations_per_second', a.token, iris))).to.equal('0');
    expect(valueOf(await metric('invocations_per_second', a.token, { ...iris, model_version: b.version }))).to.equal('');
    expect((await metric('invocations_per_second', a.token, { ...iris, workspace: b.ws.name })).status).to.equal(403);

    // The session counts the other tests expect stay as they were.
    await t.public.patch(`${irisA}/session/${session}?state=CLOSED`, { token: a.token });
    await scraped('active_sessions', a.token, {}, '3');
  });

  it('treats hostile label values as values: the query changes only in the matched value', async () => {
    await scraped('active_sessions', a.token, { model_code: 'iris-classifier' }, '2');
    const normal = await metric('active_sessions', a.token, { model_code: 'iris-classifier' });
    for (const hostile of ['"} or vector(1) #', '"} or vector(1) #\n', 'iris-classifier\\', 'iris-classifier\n', '\\"} or on() vector(1) or {a="', 'iris-classifier"} or didyma_sessions{model_code="iris-classifier']) {
      const reply = await metric('active_sessions', a.token, { model_code: hostile });
      expect(reply.status, `${hostile}: ${reply.text}`).to.equal(200);
      expect(reply.body.data.result, hostile).to.deep.equal([]);
      const literal = hostile.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
      expect(reply.body.query, hostile).to.equal(normal.body.query.replace('model_code="iris-classifier"', `model_code="${literal}"`));
    }
    // unchanged afterwards, and for b
    expect(valueOf(await metric('active_sessions', a.token, { model_code: 'iris-classifier' }))).to.equal('2');
    expect((await metric('total_models', staffToken, { workspace: `${b.ws.name}"} or vector(1) #` })).status).to.equal(404);
  });

  it('answers 502 while Prometheus is down and keeps serving everything else', async () => {
    await scraped('total_models', a.token, {}, '2');
    serviceScript('prometheus', 'stop');
    try {
      const down = await metric('total_models', a.token);
      expect(down.status).to.equal(502);
      expect(down.body).to.include({ message_code: 'bad_gateway' });
      expect(down.body.message).to.match(/metrics backend \(Prometheus\) is unreachable/);
      const range = await metric('active_sessions', a.token, { start: '0', end: '600', step: '1m' });
      expect(range.status).to.equal(502);

      expect((await t.private.get('/api/metric', { token: a.token })).status).to.equal(200);
      expect((await t.private.get('/api/deployment', { token: a.token })).status).to.equal(200);
      expect((await t.public.get('/api/model', { token: a.token })).status).to.equal(200);
      expect((await t.private.get('/readyz')).status).to.equal(200);
      const session = await openSession(a, `/api/model/iris-classifier/version/${a.version}`);
      expect(session).to.be.a('string');
      expect((await metric('no_such_metric', a.token)).status).to.equal(404);
      expect((await metric('total_models', a.token, { start: '1' })).status).to.equal(400);
    } finally {
      serviceScript('prometheus', 'start');
    }
    await scraped('active_sessions', a.token, {}, '4');
  });
});
