import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link } from '@opentelemetry/api';

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

/** Adds attributes to the span now active, if any (the request's server span, say). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/**
 * Runs `work` in a new consumer span whose parent is the stored traceparent
 * (the request that queued the work) and which links to the span active now
 * (the delivery of the message that gave the turn), as the messaging
 * conventions have a consumer do when one message does not carry one trace.
 */
export async function inConsumerSpan<T>(name: string, traceparent: string | null, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  const delivery = trace.getActiveSpan()?.spanContext();
  const links: Link[] = delivery && trace.isSpanContextValid(delivery) ? [{ context: delivery }] : [];
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes, links }, parent, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}
