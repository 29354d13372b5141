import type { Express, Router } from 'express';
import type { OperationRoutes } from '../../infra/http/operations/routes.js';
import type { Platform } from '../../platform/platform.js';
import { createHttpApp } from '../../infra/http/app.js';
import type { OpenApiDocument } from '../../infra/http/openapi.js';
import { pingDatabase } from '../../infra/db/database.js';
import { auditRequests } from './audit.js';

export type ServerName = 'auth' | 'private' | 'public';

/** One of the three HTTP servers: the common app with the platform's limits, readiness and metrics. */
export function createServerApp(platform: Platform, name: ServerName, parts: { openApi: OpenApiDocument; routes: OperationRoutes; extra?: Router; secretQuery?: readonly string[] }): Express {
  const { config } = platform;
  return createHttpApp({
    name,
    logger: platform.logger,
    requestLogLevel: config.requestLogLevel,
    ...parts,
    maxBodyBytes: config.maxBodyBytes,
    maxInFlight: config.maxInFlight,
    maxJsonDepth: config.maxJsonDepth,
    trustProxy: config.trustProxy,
    validateResponses: config.validateResponses,
    ready: () => pingDatabase(platform.db),
    draining: () => platform.shutdown.draining,
    // With a metrics port, the process serves `/metrics` there (`startServers`), not on the API port.
    metrics: config.metricsPort === undefined ? platform.metrics.handler(name) : undefined,
    audit: auditRequests(platform.audit),
  });
}
