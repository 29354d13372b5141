import { context, propagation, trace, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AlwaysOffSampler, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace';

// OpenTelemetry's API takes one tracer provider per process, and a module's
// tracer stays bound to the first one it used: the test files that trace
// share this provider and switch its sampler, and between them nothing is
// propagated or recorded, as in a process without the SDK.

const spans = new InMemorySpanExporter();
const sampling = {
  current: new AlwaysOffSampler() as Sampler,
  shouldSample(parent: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]) {
    return this.current.shouldSample(parent, traceId, name, kind, attributes, links);
  },
  toString: () => 'the test sampler',
};
let registered = false;

/** Traces this process with `sampler` as the Node SDK would, until `untraceTests`; the spans finished go to the exporter returned, emptied. */
export function traceTests(sampler: Sampler): InMemorySpanExporter {
  if (!registered) registered = trace.setGlobalTracerProvider(new TracerProvider({ sampler: sampling, spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }));
  sampling.current = sampler;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  spans.reset();
  return spans;
}

/** Stops what `traceTests` started: no context or traceparent is carried, no span recorded. */
export function untraceTests(): void {
  sampling.current = new AlwaysOffSampler();
  context.disable();
  propagation.disable();
  spans.reset();
}
