import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AlwaysOnSampler, ParentBasedSampler, type InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { listen } from '../../test/support/platform.js';
import { Client } from '../../test/support/http.js';
import { traceTests, untraceTests } from '../../test/support/tracing.js';
import { createHttpApp } from '../http/app.js';
import type { OpenApiDocument } from '../http/openapi.js';
import { operationRoutes } from '../http/operations/routes.js';

// The server span each request gets from the HTTP app, with the SDK's own
// provider, context manager and W3C propagator registered as the Node SDK
// registers them, with its default sampler: child of the caller's traceparent, named by the route,
// ended with the status, never holding a secret of the URL.

const doc = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/api/item/{itemId}': {
      parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'string' } }],
      get: { responses: { '200': { description: 'item', content: { 'application/json': { schema: { type: 'object' } } } } } },
    },
    '/api/invitation/{token}': {
      parameters: [{ name: 'token', in: 'path', required: true, 'x-secret': true, schema: { type: 'string' } }],
      get: { parameters: [{ name: 'x', in: 'query', schema: { type: 'string' } }], responses: { '500': { description: 'broken', content: { 'application/json': { schema: { type: 'object' } } } } } },
    },
  },
} as unknown as OpenApiDocument;

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

describe('server spans of the HTTP app', () => {
  let exporter: InMemorySpanExporter;
  const lines: Array<Record<string, unknown>> = [];
  let client: Client;
  let close: () => void;

  before(async () => {
    exporter = traceTests(new ParentBasedSampler({ root: new AlwaysOnSampler() }));
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(JSON.parse(String(chunk)));
        callback();
      },
    });
    // What the pino instrumentation adds to every line: the ids of the span active when it is written.
    const logger = pino({ level: 'info', mixin: () => ({ trace_id: trace.getActiveSpan()?.spanContext().traceId }) }, sink);
    const routes = operationRoutes()
      .get('/api/item/:itemId', (req, res) => void res.json({ id: req.params.itemId }))
      .get('/api/invitation/:token', (_req, res) => void res.status(500).json({}));
    const app = createHttpApp({ name: 'test', logger, openApi: doc, routes, maxBodyBytes: 10_000, trustProxy: 'false', validateResponses: false, ready: async () => undefined });
    const { url, server } = await listen(app);
    client = new Client(url);
    close = () => server.close();
  });

  after(() => {
    close();
    untraceTests();
  });

  beforeEach(() => {
    exporter.reset();
    lines.length = 0;
  });

  const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

  it('continues the caller\'s trace in one server span named by the route, with the status', async () => {
    const answer = await client.get('/api/item/42', { headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` } });
    expect(answer.status).to.equal(200);
    await settled();
    const spans = exporter.getFinishedSpans();
    expect(spans).to.have.length(1);
    const [span] = spans;
    expect(span!.kind).to.equal(SpanKind.SERVER);
    expect(span!.name).to.equal('GET /api/item/{itemId}');
    expect(span!.spanContext().traceId).to.equal(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).to.equal(CALLER_SPAN);
    expect(span!.attributes).to.include({ 'http.request.method': 'GET', 'http.route': '/api/item/{itemId}', 'url.path': '/api/item/42', 'http.response.status_code': 200 });
    expect(span!.status.code).to.equal(SpanStatusCode.UNSET);
  });

  it('starts a trace of its own without a traceparent, and the request\'s log line carries it', async () => {
    await client.get('/api/item/7');
    await settled();
    const [span] = exporter.getFinishedSpans();
    expect(span!.parentSpanContext).to.equal(undefined);
    const line = lines.find((entry) => entry.msg === 'request completed');
    expect(line?.trace_id).to.equal(span!.spanContext().traceId);
  });

  it('marks a 5xx as an error and keeps a secret path segment out of the span', async () => {
    await client.get('/api/invitation/the-secret-token?x=1');
    await settled();
    const [span] = exporter.getFinishedSpans();
    expect(span!.status.code).to.equal(SpanStatusCode.ERROR);
    expect(span!.attributes['url.path']).to.equal('/api/invitation/[redacted]');
    expect(JSON.stringify(span!.attributes)).to.not.include('the-secret-token');
  });

  it('traces no probe', async () => {
    await client.get('/healthz');
    await client.get('/readyz');
    await settled();
    expect(exporter.getFinishedSpans()).to.deep.equal([]);
  });

  it('follows the caller\'s decision not to record', async () => {
    const answer = await client.get('/api/item/1', { headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-00` } });
    expect(answer.status).to.equal(200);
    await settled();
    expect(exporter.getFinishedSpans()).to.deep.equal([]);
  });
});
