import { expect } from 'chai';
import crypto from 'node:crypto';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { sharedDatabaseUrl } from '../support/database.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { didymaProcess } from '../support/didyma-process.js';
import { freePorts, type ManagedProcess } from '../support/model-servers.js';
import { until } from '../support/until.js';
import { lineage, modelCallsOf, runsOf, tag, traceIdsTagged, traceOf, type JaegerSpan } from '../support/jaeger.js';

// One prediction with an explanation, sent with the client's own traceparent
// through a public server and an executor in processes of their own (the
// production mode: PostgreSQL and RabbitMQ), both exporting to a real Jaeger:
// the trace Jaeger gives back must hold the request, the queue hop, both runs
// and both model-server calls, each run the child of what queued it.

describe('one trace per invocation across the queue (OpenTelemetry to Jaeger)', function () {
  this.timeout(240_000);
  let t: TestPlatform;
  let owner: Tenant;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  const children: ManagedProcess[] = [];
  let executor: ManagedProcess;
  let publicUrl: string;
  let queueName: string;
  let amqpUrl: string;
  const version = unique('trace');

  before(async () => {
    const otlp = requireEnv('TEST_OTLP_ENDPOINT', 'jaeger');
    amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
    queueName = unique('dy-trace');
    t = await startTestPlatform({ amqpUrl, queueName });
    owner = await tenant(t);
    demo = await startDemoModelServer(version);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    const payload = modelPayload('iris-classifier', version, card.file_id, { explainer: modelPayload('iris-explainer', version, card.file_id) });
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: payload });
    expect(registered.status, registered.text).to.equal(201);

    const [port] = await freePorts(1);
    const env = {
      DATABASE_URL: await sharedDatabaseUrl(),
      DIDYMA_AMQP_URL: amqpUrl,
      DIDYMA_QUEUE_NAME: queueName,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      // Spans leave within a fifth of a second, so the test reads them back soon.
      OTEL_BSP_SCHEDULE_DELAY: '200',
    };
    children.push(didymaProcess('public', ['serve', 'public'], { ...env, DIDYMA_PUBLIC_PORT: String(port) }));
    executor = didymaProcess('executor', ['executor'], { ...env, DIDYMA_EXECUTOR_PORT: '0', DIDYMA_LOG_LEVEL: 'info' });
    children.push(executor);
    publicUrl = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${publicUrl}/healthz`).catch(() => undefined))?.ok === true, 'the public server to answer', 60_000);
  });

  after(async () => {
    await Promise.all(children.map((child) => child.stop(0)));
    await demo?.close();
    await t?.close();
    if (queueName) await deleteWorkQueue(amqpUrl, queueName);
  });

  async function post(path: string, traceparent: string, json: unknown) {
    const response = await fetch(`${publicUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json', traceparent },
      body: JSON.stringify(json),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('follows a prediction and its explanation from the request, through the queue, to both model-server calls', async () => {
    const traceId = crypto.randomBytes(16).toString('hex');
    const clientSpan = crypto.randomBytes(8).toString('hex');
    const base = `/api/model/iris-classifier/version/${version}`;
    const session = await post(`${base}/session`, `00-${traceId}-${clientSpan}-01`, {});
    expect(session.status).to.equal(201);
    const invoked = await post(`${base}/session/${session.body.id}/invocation`, `00-${traceId}-${clientSpan}-01`, {
      type: 'PREDICT',
      request: { type: 'FEATURES', body: IRIS },
      with_explanation: true,
    });
    expect(invoked.status).to.equal(201);

    const runs = runsOf;
    const modelCalls = modelCallsOf;
    const trace = await traceOf(traceId, (candidate) => runs(candidate).length === 2 && modelCalls(candidate).length === 2);
    const { service, parentOf, ancestorsOf } = lineage(trace);

    // The public server's span of the POST, child of the client's span, and in it the handler's, naming the invocation.
    const handler = trace.spans.find((span) => tag(span, 'didyma.invocation.id') === invoked.body.id && service(span) === 'didyma-public');
    expect(handler, 'the span of the POST that queued the invocation').to.not.equal(undefined);
    const request = [handler!, ...ancestorsOf(handler!)].find((span) => tag(span, 'span.kind') === 'server');
    expect(request, 'the public server span of the POST').to.not.equal(undefined);
    expect(request!.references.map((ref) => ref.spanID)).to.include(clientSpan);
    expect(tag(handler!, 'didyma.model.code')).to.equal('iris-classifier');

    // The runs, in the executor: the prediction's under the request, the explanation's under the prediction's run.
    const [prediction, explanation] = ['PREDICT', 'EXPLAIN'].map((type) => runs(trace).find((span) => tag(span, 'didyma.invocation.type') === type)!);
    expect(prediction, 'the prediction run').to.not.equal(undefined);
    expect(explanation, 'the explanation run').to.not.equal(undefined);
    expect([service(prediction!), service(explanation!)]).to.deep.equal(['didyma-executor', 'didyma-executor']);
    expect(tag(prediction!, 'span.kind')).to.equal('consumer');
    expect(tag(prediction!, 'didyma.invocation.id')).to.equal(invoked.body.id);
    expect(tag(prediction!, 'didyma.invocation.status')).to.equal('COMPLETED');
    expect(tag(prediction!, 'didyma.model.code')).to.equal('iris-classifier');
    expect(tag(explanation!, 'didyma.model.code')).to.equal('iris-explainer');
    expect(tag(explanation!, 'didyma.invocation.status')).to.equal('COMPLETED');
    expect(parentOf(explanation!)?.spanID, 'the explanation run is a child of the prediction run').to.equal(prediction!.spanID);
    expect(ancestorsOf(prediction!), 'the prediction run descends from the POST').to.include(request);

    // Each run's call to the model server, within the run.
    const ancestors = (span: JaegerSpan) => ancestorsOf(span).map((ancestor) => ancestor.spanID);
    const calls = modelCalls(trace);
    expect(calls.map((call) => ancestors(call).includes(prediction!.spanID) || ancestors(call).includes(explanation!.spanID))).to.deep.equal([true, true]);
    expect(calls.some((call) => ancestors(call).includes(explanation!.spanID)), 'the explainer call under the explanation run').to.equal(true);

    // The executor's log line of the run leads to its trace.
    const completed = executor.tail(200).split('\n').find((line) => line.includes(String(invoked.body.id)) && line.includes('invocation completed'));
    expect(completed, 'the log line of the completed run').to.not.equal(undefined);
    expect(JSON.parse(completed!.slice(completed!.indexOf('{')))).to.include({ trace_id: traceId, span_id: prediction!.spanID });

    // The audit records of both POSTs lead to the trace too.
    const audited = (await t.platform.db('audit_records').where({ trace_id: traceId }).select('action', 'outcome')) as Array<{ action: string; outcome: number }>;
    expect(audited.map((record) => record.outcome), 'the audit records of the trace').to.deep.equal([201, 201]);

    // From the invocation's id alone, as an operator would: Jaeger's search by the runs' tag, and the audit record of the POST that queued it.
    const id = String(invoked.body.id);
    expect(await traceIdsTagged('didyma-executor', { 'didyma.invocation.id': id }), 'the traces Jaeger finds by the invocation id').to.deep.equal([traceId]);
    const records = await t.auth.get(`/api/auth/audit?resource_type=invocation&resource_id=${id}`, { token: owner.token });
    expect(records.status).to.equal(200);
    expect(records.body.map((record: { action: string; trace_id: string }) => [record.action, record.trace_id])).to.deep.equal([['createInvocation', traceId]]);

    // No bodies in any span.
    expect(JSON.stringify(trace)).to.not.include('sepal_length');
  });
});
