import express, { type Express, type Router } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Logger } from 'pino';
import type { OpenApiDocument } from './openapi.js';
import type { MetricsHandler } from '../metrics/exposition.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { inFlightLimit, rejectDeepJson } from './limits.js';
import { requestLog } from './request-log.js';
import { memoizeValidatorRoutePatterns } from './route-patterns.js';

export interface HttpAppOptions {
  name: string;
  logger: Logger;
  openApi: OpenApiDocument;
  routes: Router;
  maxBodyBytes: number;
  trustProxy: string;
  validateResponses: boolean;
  /** Resolves when the process can serve traffic (database reachable, …). */
  ready: () => Promise<void>;
  /** Mounted before validation: routes outside the OpenAPI document (dashboard, metrics). */
  extra?: Router;
  /** Serves `GET /metrics` (Prometheus text), outside the OpenAPI document like the health checks. */
  metrics?: MetricsHandler;
  /** Load shedding: requests in flight beyond this are refused with 503 (0: no limit). */
  maxInFlight?: number;
  /** JSON bodies nested deeper than this are refused with 400 before they are parsed. */
  maxJsonDepth?: number;
}

/** Probes and scrapes: answered, not logged. */
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

  // Request lines are made of fixed fields (id, method, path, status, time, address), never a
  // credential: their logger skips the redaction pass, which cost more than the line itself.
  app.use(requestLog(options.logger.child({ server: options.name }, { redact: { paths: [] } }), QUIET_PATHS));
  app.use((req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    // One route per resource: `/x/` is `/x` (the spec writes both forms).
    if (req.path.length > 1 && req.path.endsWith('/')) req.url = req.path.replace(/\/+$/, '') + req.url.slice(req.path.length);
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await options.ready();
      res.json({ status: 'ready' });
    } catch (error) {
      res.status(503).json({ status: 'unavailable', message: (error as Error).message });
    }
  });
  if (options.metrics) app.get('/metrics', options.metrics);
  const published = structuredClone(options.openApi);
  app.get('/openapi.json', (_req, res) => {
    res.json(published);
  });
  // Health, metrics and the document above always answer; everything below is shed under overload.
  app.use(inFlightLimit(options.maxInFlight ?? 0));
  if (options.extra) app.use(options.extra);

  app.use(express.json({ limit: options.maxBodyBytes, type: ['application/json', 'application/*+json'], verify: rejectDeepJson(options.maxJsonDepth ?? 100) }));
  app.use(express.urlencoded({ extended: false, limit: options.maxBodyBytes, parameterLimit: 100 }));
  memoizeValidatorRoutePatterns();
  app.use(
    OpenApiValidator.middleware({
      apiSpec: structuredClone(options.openApi) as never,
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: true },
      validateResponses: options.validateResponses ? { removeAdditional: false } : false,
      validateSecurity: false,
      fileUploader: false,
      validateFormats: true,
    }),
  );
  app.use(options.routes);
  app.use(notFoundHandler);
  app.use(errorHandler(options.logger));
  return app;
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}
