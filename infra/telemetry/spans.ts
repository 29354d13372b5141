import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type SpanOptions } from '@opentelemetry/api';
import { PendingRun } from './kept-runs.js';

const tracer = trace.getTracer('didyma');

/** The W3C traceparent of the span now active, to store with work that runs later; null when nothing is traced. */
export function currentTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The trace id of the span now active, for records that lead to it (the audit trail); null when nothing is traced. */
export function currentTraceId(): string | null {
  const active = trace.getActiveSpan()?.spanContext();
  return active && trace.isSpanContextValid(active) ? active.traceId : null;
}

/** Runs `work` in no trace: its spans (a database statement's, say) start no trace and join none. */
export function outsideAnyTrace<T>(work: () => T): T {
  return context.with(ROOT_CONTEXT, work);
}

/**
 * Names the server span of a request by its documented route (`POST
 * /api/model/{code}/…`), as the HTTP conventions ask: the route, not the path
 * with its ids, so that spans of one operation group together.
 */
export function nameServerSpan(method: string, route: string): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}

/** Adds attributes to the span now active, if any (the request's server span, say), and to the unrecorded run it belongs to. */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
  PendingRun.of(context.active())?.annotate(attributes);
}

/**
 * Runs `work` in a new consumer span whose parent is the stored traceparent
 * (the request that queued the work). A run the sampler did not record is recorded when it ends if the process's
 * rule asks for it (kept-runs.ts: a failed or slow run).
 */
export async function inConsumerSpan<T>(name: string, traceparent: string | null, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  const options: SpanOptions = { kind: SpanKind.CONSUMER, attributes };
  return tracer.startActiveSpan(name, options, parent, async (span) => {
    const pending = span.isRecording() ? undefined : PendingRun.start(name, options, parent);
    try {
      return await (pending ? context.with(pending.within(context.active()), work) : work());
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      pending?.threw(error);
      throw error;
    } finally {
      span.end();
      pending?.end();
    }
  });
}
