import type { Express } from 'express';
import type { Platform } from '../../core/platform.js';
import { createHttpApp } from '../../core/http/app.js';
import { loadOpenApi } from '../../core/http/openapi.js';
import { pingDatabase } from '../../core/db/database.js';
import { publicRoutes } from './routes.js';

const document = loadOpenApi(new URL('./openapi.yaml', import.meta.url));

/** The public server: models, sessions, invocations, feedback. */
export function createPublicServer(platform: Platform): Express {
  return createHttpApp({
    name: 'public',
    logger: platform.logger,
    openApi: document,
    routes: publicRoutes(platform),
    maxBodyBytes: platform.config.maxBodyBytes,
    maxInFlight: platform.config.maxInFlight,
    maxJsonDepth: platform.config.maxJsonDepth,
    trustProxy: platform.config.trustProxy,
    validateResponses: platform.config.validateResponses,
    ready: () => pingDatabase(platform.db),
    metrics: platform.metrics.handler('public'),
  });
}
