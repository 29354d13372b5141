import express, { type Express, type RequestHandler, type Router } from 'express';
import type { Level, Logger } from 'pino';
import type { OpenApiDocument } from './openapi.js';
import type { MetricsHandler } from './metrics-exposition.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { checkJsonText, inFlightLimit } from './limits.js';
import { requestLog } from './request-log.js';
import { redactUrl, secretParameters } from './secret-parameters.js';
import { fixedEndpoints, inTurn, leanJson, whenBody } from './pipeline.js';
import { serveOperations } from './operations/serve.js';
import { apiDocsEndpoints } from './api-docs.js';
import { serverSpans } from '../telemetry/server-span.js';
import type { OperationRoutes } from './operations/routes.js';

export interface HttpAppOptions {
  name: string;
  logger: Logger;
  /** The level of the one line logged per request (default info; 5xx lines are errors). */
  requestLogLevel?: Level;
  openApi: OpenApiDocument;
  /** The handlers of the document's operations. */
  routes: OperationRoutes;
  maxBodyBytes: number;
  trustProxy: string;
  validateResponses: boolean;
  /** Resolves when the process can serve traffic (database reachable, …). */
  ready: () => Promise<void>;
  /** True once the process is shutting down: not ready, and every answer closes its connection. */
  draining?: () => boolean;
  /** Mounted before validation: routes outside the OpenAPI document (dashboard, metrics). */
  extra?: Router;
  /** Serves `GET /metrics` (Prometheus text), outside the OpenAPI document like the health checks. */
  metrics?: MetricsHandler;
  /** Load shedding: requests in flight beyond this are refused with 503 (0: no limit). */
  maxInFlight?: number;
  /** JSON bodies nested deeper than this are refused with 400 before they are parsed. */
  maxJsonDepth?: number;
  /** Runs before the routes; watches each answer (the audit trail). */
  audit?: RequestHandler;
  /** Query parameters of `extra`'s routes that hold credentials (the document marks its own `x-secret`). */
  secretQuery?: readonly string[];
}

/** Probes and scrapes: answered, not logged or traced. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The common shape of every HTTP server: request ids and logs, health, the
 * OpenAPI document served and enforced, size-limited parsers, the routes,
 * then the one error middleware.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // Responses are `Cache-Control: no-store`: an ETag (a hash of every body) would never be used.
  app.disable('etag');
  app.set('trust proxy', parseTrustProxy(options.trustProxy));
  app.set('query parser', 'simple');

  app.response.json = leanJson;

  // Request lines are made of fixed fields (id, method, redacted URL, status, time, address), never a
  // credential: their logger skips the redaction pass, which cost more than the line itself.
  const secrets = secretParameters([options.openApi], options.secretQuery);
  const log = requestLog(options.logger.child({ server: options.name }, { redact: { paths: [] } }), QUIET_PATHS, (url) => redactUrl(url, secrets), options.requestLogLevel);
  const published = structuredClone(options.openApi);
  const draining = options.draining ?? (() => false);
  const probes = fixedEndpoints({
    '/healthz': (_req, res) => void res.json({ status: 'ok' }),
    '/readyz': async (_req, res) => {
      try {
        if (draining()) throw new Error('shutting down');
        await options.ready();
        res.json({ status: 'ready' });
      } catch (error) {
        res.status(503).json({ status: 'unavailable', message: (error as Error).message });
      }
    },
    ...(options.metrics ? { '/metrics': options.metrics } : {}),
    '/openapi.json': (_req, res) => void res.json(published),
  });
  // The document to read and try in a browser: outside the document itself, like the probes.
  const docs = fixedEndpoints(apiDocsEndpoints(documentTitle(options.openApi, options.name)));
  const json = express.json({ limit: options.maxBodyBytes, type: ['application/json', 'application/*+json'], verify: checkJsonText(options.maxJsonDepth ?? 100) });
  const form = express.urlencoded({ extended: false, limit: options.maxBodyBytes, parameterLimit: 100 });
  // The whole path of a request is one layer of express's router, which matches every layer on every
  // request. Probes, metrics and the document always answer; everything after them is shed under overload.
  app.use(
    inTurn(
      // The server span first, so that it covers all of the request.
      serverSpans(QUIET_PATHS),
      log,
      commonHeaders(draining),
      probes,
      inFlightLimit(options.maxInFlight ?? 0),
      docs,
      ...(options.audit ? [options.audit] : []),
      ...(options.extra ? [options.extra] : []),
      serveOperations(options.openApi, options.routes, { logger: options.logger, validateResponses: options.validateResponses, parseBody: whenBody(inTurn(json, form)) }),
      notFoundHandler,
    ),
  );
  app.use(errorHandler(options.logger));
  return app;
}

/** Headers of every answer, and one route per resource: `/x/` is `/x` (the spec writes both forms). */
function commonHeaders(draining: () => boolean): RequestHandler {
  return (req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    // Shutting down: clients open a new connection for their next request, which a load balancer sends elsewhere.
    if (draining()) res.setHeader('Connection', 'close');
    if (req.path.length > 1 && req.path.endsWith('/')) req.url = req.path.replace(/\/+$/, '') + req.url.slice(req.path.length);
    next();
  };
}

function documentTitle(doc: OpenApiDocument, name: string): string {
  const info = doc.info as { title?: unknown } | undefined;
  return typeof info?.title === 'string' ? info.title : `didyma ${name} server`;
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}
