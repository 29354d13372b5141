import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace';
import { KEPT_ATTRIBUTE } from './kept-runs.js';

/**
 * The sampler the standard variables configure, except that a span started
 * with `KEPT_ATTRIBUTE` is recorded and exported: a failed or slow run stays
 * findable by its trace id even when its request was not sampled.
 */
export class KeepRequestedSampler implements Sampler {
  constructor(private readonly configured: Sampler) {}

  shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (attributes[KEPT_ATTRIBUTE] !== undefined) return { decision: SamplingDecision.RECORD_AND_SAMPLED };
    return this.configured.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `KeepRequested{${this.configured.toString()}}`;
  }
}

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, read as
 * the Node SDK reads them (which does not export its own reader): unset, or
 * a name it does not know, is its default `parentbased_always_on`; a ratio
 * blank or outside [0, 1] is 1.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler {
  const ratio = () => {
    const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim() ?? '';
    const value = Number(raw);
    return raw === '' || !(value >= 0 && value <= 1) ? 1 : value;
  };
  switch (env.OTEL_TRACES_SAMPLER?.trim()) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
