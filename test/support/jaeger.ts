import { requireEnv } from './services.js';
import { until } from './until.js';

// Reading traces back from the test Jaeger's query API
// (scripts/services/jaeger.sh), in its own JSON shape.

export interface JaegerSpan {
  spanID: string;
  operationName: string;
  processID: string;
  references: Array<{ refType: string; spanID: string }>;
  tags: Array<{ key: string; value: unknown }>;
}

export interface JaegerTrace {
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

/** The test Jaeger's query API. */
const queryUrl = () => requireEnv('TEST_JAEGER_QUERY_URL', 'jaeger');

export const tag = (span: JaegerSpan, key: string) => span.tags.find((t) => t.key === key)?.value;

/** Waits until Jaeger holds trace `traceId` and `complete` accepts it; the failure names the spans it held. */
export async function traceOf(traceId: string, complete: (trace: JaegerTrace) => boolean, timeoutMs = 60_000): Promise<JaegerTrace> {
  const query = queryUrl();
  let last: JaegerTrace | undefined;
  await until(
    async () => {
      const response = await fetch(`${query}/api/traces/${traceId}`);
      if (!response.ok) return false;
      last = ((await response.json()) as { data: JaegerTrace[] }).data[0];
      return Boolean(last && complete(last));
    },
    `Jaeger to hold the whole trace ${traceId}`,
    timeoutMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; it holds: ${JSON.stringify(last?.spans.map((s) => [last!.processes[s.processID]?.serviceName, s.operationName]))}`);
  });
  return last!;
}

/** The ids of the traces holding a span of `service` with these tags, as an operator searches Jaeger. */
export async function traceIdsTagged(service: string, tags: Record<string, string>): Promise<string[]> {
  const response = await fetch(`${queryUrl()}/api/traces?${new URLSearchParams({ service, tags: JSON.stringify(tags), lookback: '1h' })}`);
  if (!response.ok) throw new Error(`Jaeger's search answered ${response.status}`);
  return ((await response.json()) as { data: Array<{ traceID: string }> }).data.map((trace) => trace.traceID);
}

/** The runs of invocations in the executor, and the calls to model servers, of a trace. */
export const runsOf = (trace: JaegerTrace) => trace.spans.filter((span) => span.operationName === 'process invocation');
export const modelCallsOf = (trace: JaegerTrace) =>
  trace.spans.filter((span) => tag(span, 'span.kind') === 'client' && /\/infer$/.test(String(tag(span, 'url.full') ?? tag(span, 'http.url') ?? '')));

/** Spans by their parent (CHILD_OF) links. */
export function lineage(trace: JaegerTrace) {
  const byId = new Map(trace.spans.map((span) => [span.spanID, span]));
  const parentOf = (span: JaegerSpan) => byId.get(span.references.find((ref) => ref.refType === 'CHILD_OF')?.spanID ?? '');
  const ancestorsOf = (span: JaegerSpan): JaegerSpan[] => {
    const parent = parentOf(span);
    return parent ? [parent, ...ancestorsOf(parent)] : [];
  };
  return { parentOf, ancestorsOf, service: (span: JaegerSpan) => trace.processes[span.processID]!.serviceName };
}
