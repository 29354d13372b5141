import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { sharedDatabaseUrl } from '../support/database.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { didymaProcess } from '../support/didyma-process.js';
import { freePorts, type ManagedProcess } from '../support/model-servers.js';
import { until } from '../support/until.js';
import { lineage, runsOf, tag, traceIdsTagged, traceOf } from '../support/jaeger.js';

// A public server and an executor in processes of their own, exporting to a
// real Jaeger with a sampler that records no request they start
// (parentbased_traceidratio 0): an invocation that fails is still found by
// the trace id of its POST's audit record, its run recorded by the executor
// in that trace; one that completes within DIDYMA_TRACING_SLOW_RUN_MS is not.

describe('a failed run found by its trace id when the request was not sampled (OpenTelemetry to Jaeger)', function () {
  this.timeout(240_000);
  let t: TestPlatform;
  let owner: Tenant;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  const children: ManagedProcess[] = [];
  let publicUrl: string;
  let queueName: string;
  let amqpUrl: string;
  const version = unique('kept');

  before(async () => {
    const otlp = requireEnv('TEST_OTLP_ENDPOINT', 'jaeger');
    amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    queueName = unique('dy-kept');
    t = await startTestPlatform({ amqpUrl, queueName });
    owner = await tenant(t);
    demo = await startDemoModelServer(version);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    for (const code of ['iris-classifier', 'always-fails']) {
      const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload(code, version, card.file_id, { retry_policy: { retry_on: [] } }) });
      expect(registered.status, registered.text).to.equal(201);
    }
    const [port] = await freePorts(1);
    const env = {
      DATABASE_URL: await sharedDatabaseUrl(),
      DIDYMA_AMQP_URL: amqpUrl,
      DIDYMA_QUEUE_NAME: queueName,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    };
    children.push(didymaProcess('public', ['serve', 'public'], { ...env, DIDYMA_PUBLIC_PORT: String(port) }));
    children.push(didymaProcess('executor', ['executor'], { ...env, DIDYMA_EXECUTOR_PORT: '0' }));
    publicUrl = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${publicUrl}/healthz`).catch(() => undefined))?.ok === true, 'the public server to answer', 60_000);
  });

  after(async () => {
    await Promise.all(children.map((child) => child.stop(0)));
    await demo?.close();
    await t?.close();
    if (queueName) await deleteWorkQueue(amqpUrl, queueName);
  });

  /** A prediction of `code` through the public server's process, without a traceparent, run to its end; its id and final status. */
  async function invoke(code: string): Promise<{ id: string; status: string }> {
    const headers = { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' };
    const model = `${publicUrl}/api/model/${code}/version/${version}`;
    const session = (await (await fetch(`${model}/session`, { method: 'POST', headers })).json()) as { id: string };
    const created = await fetch(`${model}/session/${session.id}/invocation`, { method: 'POST', headers, body: JSON.stringify({ type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } }) });
    expect(created.status).to.equal(201);
    const { id } = (await created.json()) as { id: string };
    let status = '';
    await until(async () => {
      status = ((await (await fetch(`${model}/session/${session.id}/invocation/${id}`, { headers })).json()) as { status: string }).status;
      return status === 'COMPLETED' || status === 'ERROR';
    }, `${code}'s invocation to end`);
    return { id, status };
  }

  it('records the failed run in the trace its POST started, and nothing of a completed one', async () => {
    const completed = await invoke('iris-classifier');
    expect(completed.status).to.equal('COMPLETED');
    const failed = await invoke('always-fails');
    expect(failed.status).to.equal('ERROR');

    // The trace id as an operator reads it: the audit record of the POST that queued the invocation.
    const records = await t.auth.get(`/api/auth/audit?resource_type=invocation&resource_id=${failed.id}`, { token: owner.token });
    const traceId = records.body[0]?.trace_id as string;
    expect(traceId).to.match(/^[0-9a-f]{32}$/);

    const trace = await traceOf(traceId, (candidate) => runsOf(candidate).length === 1);
    const { service } = lineage(trace);
    expect(trace.spans, 'the run alone: the request was not sampled').to.have.length(1);
    const [run] = trace.spans;
    expect(service(run!)).to.equal('didyma-executor');
    expect([tag(run!, 'didyma.invocation.id'), tag(run!, 'didyma.invocation.status'), tag(run!, 'didyma.model.code'), tag(run!, 'didyma.trace.kept')]).to.deep.equal([
      failed.id,
      'ERROR',
      'always-fails',
      'failed',
    ]);
    // Jaeger's search by the invocation's id finds it too; the completed run, exported before it if at all, is not there.
    expect(await traceIdsTagged('didyma-executor', { 'didyma.invocation.id': failed.id })).to.deep.equal([traceId]);
    expect(await traceIdsTagged('didyma-executor', { 'didyma.invocation.id': completed.id })).to.deep.equal([]);
  });
});
