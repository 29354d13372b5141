import { expect } from 'chai';
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { SamplingDecision, type InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { traceTests, untraceTests } from '../../test/support/tracing.js';
import { KEPT_ATTRIBUTE, keepUnrecordedRuns, type KeepRule } from './kept-runs.js';
import { KeepRequestedSampler, samplerFromEnv } from './sampler.js';
import { annotateSpan, inConsumerSpan } from './spans.js';

// A run whose request the sampler dropped (ratio 0, the traceparent stored
// unsampled) is recorded after all when the process's rule asks for it, in
// the stored trace, as the child of the stored span.

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const REQUEST_SPAN = '00f067aa0ba902b7';
const unsampled = `00-${TRACE_ID}-${REQUEST_SPAN}-00`;
const sampled = `00-${TRACE_ID}-${REQUEST_SPAN}-01`;
const failedRule: KeepRule = ({ attributes, error }) => (error !== undefined || attributes.status === 'ERROR' ? 'failed' : undefined);

describe('runs recorded whatever the head decision', () => {
  let exporter: InMemorySpanExporter;

  before(() => {
    exporter = traceTests(new KeepRequestedSampler(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })));
  });
  after(() => {
    keepUnrecordedRuns(undefined);
    untraceTests();
  });
  beforeEach(() => {
    exporter.reset();
    keepUnrecordedRuns(failedRule);
  });

  const run = (traceparent: string, status: string) => inConsumerSpan('process invocation', traceparent, { id: 'i-1', status: 'IN_PROGRESS' }, async () => annotateSpan({ status }));

  it('records a failed run of an unsampled trace in that trace, with what was annotated and why it was kept', async () => {
    await run(unsampled, 'ERROR');
    const spans = exporter.getFinishedSpans();
    expect(spans).to.have.length(1);
    const [span] = spans;
    expect(span!.name).to.equal('process invocation');
    expect(span!.kind).to.equal(SpanKind.CONSUMER);
    expect(span!.spanContext().traceId).to.equal(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).to.equal(REQUEST_SPAN);
    expect(span!.attributes).to.deep.equal({ id: 'i-1', status: 'ERROR', [KEPT_ATTRIBUTE]: 'failed' });
  });

  it('records a run that threw, as an error', async () => {
    const failing = inConsumerSpan('process invocation', unsampled, { id: 'i-2' }, async () => {
      throw new Error('lease lost');
    });
    expect(await failing.then(() => undefined, (error: Error) => error.message)).to.equal('lease lost');
    const [span] = exporter.getFinishedSpans();
    expect(span!.spanContext().traceId).to.equal(TRACE_ID);
    expect(span!.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'lease lost' });
    expect(span!.events.map((event) => event.name)).to.deep.equal(['exception']);
  });

  it('leaves out a run the rule does not ask for, and every run without a rule', async () => {
    await run(unsampled, 'COMPLETED');
    keepUnrecordedRuns(undefined);
    await run(unsampled, 'ERROR');
    expect(exporter.getFinishedSpans()).to.deep.equal([]);
  });

  it('records a sampled run once, as it always did', async () => {
    await run(sampled, 'ERROR');
    const spans = exporter.getFinishedSpans();
    expect(spans).to.have.length(1);
    expect(spans[0]!.attributes).to.not.have.property(KEPT_ATTRIBUTE);
  });

  it('reads the sampler from the standard variables as the SDK does', () => {
    const decide = (env: NodeJS.ProcessEnv, parent = ROOT_CONTEXT) => samplerFromEnv(env).shouldSample(parent, TRACE_ID, 'x', SpanKind.SERVER, {}, []).decision;
    const under = (traceparent: string) => propagation.extract(ROOT_CONTEXT, { traceparent });
    expect(decide({})).to.equal(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({}, under(unsampled))).to.equal(SamplingDecision.NOT_RECORD);
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_on' }, under(unsampled))).to.equal(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_off' })).to.equal(SamplingDecision.NOT_RECORD);
    expect(decide({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })).to.equal(SamplingDecision.NOT_RECORD);
    expect(decide({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, under(sampled))).to.equal(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).to.equal(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).to.equal(SamplingDecision.NOT_RECORD);
  });
});
