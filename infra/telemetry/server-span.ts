import type { RequestHandler } from 'express';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { loggedPath } from '../http/request-log.js';
import { onResponseClose } from '../http/response-close.js';

const tracer = trace.getTracer('didyma');

/**
 * The server span of each request, child of the caller's `traceparent`, made
 * here rather than by the HTTP instrumentation's incoming side, whose
 * per-request work took 28% of `POST …/invocation`'s throughput even with no
 * span recorded (docs/decisions.md). Named `METHOD` until the OpenAPI
 * dispatcher names it by its route (`nameServerSpan`). Its `url.path` is
 * the request log's URL (`req.logUrl`: secret segments redacted) without
 * the query string.
 * Without the SDK it costs a no-op span; a request the sampler drops still
 * runs in its span's context, so its trace id reaches the queue and the logs.
 */
export function serverSpans(untracedPaths: ReadonlySet<string>): RequestHandler {
  return (req, res, next) => {
    if (untracedPaths.has(req.path)) return next();
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    // Attributes only once sampled: given to startSpan, the SDK would check them for requests it drops too.
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER }, parent);
    if (!trace.isSpanContextValid(span.spanContext())) return next();
    if (span.isRecording()) {
      span.setAttributes({ 'http.request.method': req.method, 'url.scheme': req.protocol, 'client.address': req.ip ?? '' });
      onResponseClose(res, () => {
        span.setAttributes({ 'url.path': loggedPath(req), 'http.response.status_code': res.statusCode });
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        if (!res.writableFinished) span.setAttribute('error.type', 'aborted');
        span.end();
      });
    }
    context.with(trace.setSpan(parent, span), next);
  };
}
