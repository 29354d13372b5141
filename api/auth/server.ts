import type { Express } from 'express';
import type { Platform } from '../../core/platform.js';
import { createHttpApp } from '../../core/http/app.js';
import { loadOpenApi, withoutPaths } from '../../core/http/openapi.js';
import { pingDatabase } from '../../core/db/database.js';
import { authRoutes } from './routes.js';
import { createDashboard } from '../../dashboard/src/index.js';

const document = loadOpenApi(new URL('./openapi.yaml', import.meta.url));

/** The auth server: login, tokens, workspaces, invitations, and the web dashboard under /dashboard. */
export function createAuthServer(platform: Platform): Express {
  const openApi = platform.config.exposeTokenApi ? document : withoutPaths(document, (path) => path.includes('/token/{tokenId}') || path.endsWith('/{workspaceId}/token'));
  return createHttpApp({
    name: 'auth',
    logger: platform.logger,
    openApi,
    routes: authRoutes(platform),
    extra: createDashboard(platform),
    maxBodyBytes: platform.config.maxBodyBytes,
    maxInFlight: platform.config.maxInFlight,
    maxJsonDepth: platform.config.maxJsonDepth,
    trustProxy: platform.config.trustProxy,
    validateResponses: platform.config.validateResponses,
    ready: () => pingDatabase(platform.db),
    metrics: platform.metrics.handler('auth'),
  });
}
