import type { Express } from 'express';
import type { Platform } from '../../platform/platform.js';
import { loadOpenApi, withoutPaths } from '../../infra/http/openapi.js';
import { createServerApp } from '../shared/server-app.js';
import { authRoutes } from './routes.js';
import { createDashboard, DASHBOARD_SECRET_QUERY } from '../../dashboard/src/index.js';

const document = loadOpenApi(new URL('./openapi.yaml', import.meta.url));
const tokenApi = (path: string) => path.includes('/token/{tokenId}') || path.endsWith('/{workspaceId}/token');

/** The auth server: login, tokens, workspaces, invitations, and the web dashboard under /dashboard. */
export function createAuthServer(platform: Platform): Express {
  const openApi = platform.config.exposeTokenApi ? document : withoutPaths(document, tokenApi);
  return createServerApp(platform, 'auth', { openApi, routes: authRoutes(platform), extra: createDashboard(platform), secretQuery: DASHBOARD_SECRET_QUERY });
}
