import { expect } from 'chai';
import type { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startExecutor } from './start.js';
import { startTestPlatform, unique, type TestPlatform } from '../test/support/platform.js';
import { IRIS, demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../test/support/fixtures.js';
import { until } from '../test/support/until.js';
import { traceTests, untraceTests } from '../test/support/tracing.js';
import { KEPT_ATTRIBUTE, keepUnrecordedRuns } from '../infra/telemetry/kept-runs.js';
import { KeepRequestedSampler, samplerFromEnv } from '../infra/telemetry/sampler.js';
import { failedOrSlowerThan } from '../features/invocations/trace-attributes.js';

// With a sampler that records no request (parentbased_traceidratio 0), an
// invocation that fails is still found by its trace id: from the audit record
// of the POST that queued it (the API's way to an invocation's trace) to the
// run, recorded by the executor after the fact in that trace. One that
// completes within DIDYMA_TRACING_SLOW_RUN_MS leaves nothing.

describe('a failed or slow run is found by its trace id whatever the sampler decided at the request', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let owner: Tenant;
  let spans: InMemorySpanExporter;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  const version = unique('kept');

  before(async () => {
    spans = traceTests(new KeepRequestedSampler(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })));
    t = await startTestPlatform({ executorConcurrency: 2 });
    // What each process sets from DIDYMA_TRACING_SLOW_RUN_MS at its start (cli/main.ts).
    keepUnrecordedRuns(failedOrSlowerThan(t.platform.config.tracingSlowRunMs));
    executor = await startExecutor(t.platform);
    demo = await startDemoModelServer(version);
    owner = await tenant(t);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris');
    for (const code of ['iris-classifier', 'always-fails']) {
      const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload(code, version, card.file_id, { retry_policy: { retry_on: [] } }) });
      expect(registered.status, registered.text).to.equal(201);
    }
  });
  after(async () => {
    await executor?.close();
    await demo?.close();
    await t?.close();
    keepUnrecordedRuns(undefined);
    untraceTests();
  });

  /** Runs one prediction of `code` to its end; its id, final status and the trace id its POST's audit record names. */
  async function invoke(code: string): Promise<{ id: string; status: string; traceId: string }> {
    const model = `/api/model/${code}/version/${version}`;
    const session = await t.public.post(`${model}/session`, { token: owner.token });
    const created = await t.public.post(`${model}/session/${session.body.id}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.id as string;
    let status = '';
    await until(async () => {
      status = (await t.public.get(`${model}/session/${session.body.id}/invocation/${id}`, { token: owner.token })).body.status;
      return status === 'COMPLETED' || status === 'ERROR';
    }, 'the invocation to end');
    let traceId = '';
    await until(async () => {
      const records = await t.auth.get(`/api/auth/audit?resource_type=invocation&resource_id=${id}`, { token: owner.token });
      traceId = records.body[0]?.trace_id ?? '';
      return traceId !== '';
    }, 'the audit record of the POST');
    return { id, status, traceId };
  }

  const spansOf = (traceId: string) => spans.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);

  it('records the failed run of an unsampled request in the request\'s trace, and nothing of a fast one', async () => {
    const failed = await invoke('always-fails');
    expect(failed.status).to.equal('ERROR');
    const completed = await invoke('iris-classifier');
    expect(completed.status).to.equal('COMPLETED');

    await until(async () => spansOf(failed.traceId).length > 0, 'the failed run to be recorded');
    const [run, ...others] = spansOf(failed.traceId);
    expect(others, 'the request itself was not sampled').to.deep.equal([]);
    expect(run!.name).to.equal('process invocation');
    expect(run!.attributes).to.include({ 'didyma.invocation.id': failed.id, 'didyma.model.code': 'always-fails', 'didyma.invocation.status': 'ERROR', [KEPT_ATTRIBUTE]: 'failed' });
    expect(spansOf(completed.traceId), 'a run within the threshold').to.deep.equal([]);
  });

  it('records a completed run that took the threshold or longer, as slow', async () => {
    keepUnrecordedRuns(failedOrSlowerThan(0));
    const slow = await invoke('iris-classifier');
    await until(async () => spansOf(slow.traceId).length > 0, 'the slow run to be recorded');
    expect(spansOf(slow.traceId).map((span) => span.attributes)).to.deep.equal([
      { ...spansOf(slow.traceId)[0]!.attributes, 'didyma.invocation.id': slow.id, 'didyma.invocation.status': 'COMPLETED', [KEPT_ATTRIBUTE]: 'slow' },
    ]);
  });
});
