import type { Express } from 'express';
import type { Platform } from '../../platform/platform.js';
import { loadOpenApi } from '../../infra/http/openapi.js';
import { createServerApp } from '../shared/server-app.js';
import { publicRoutes } from './routes.js';

const document = loadOpenApi(new URL('./openapi.yaml', import.meta.url));

/** The public server: models, sessions, invocations, feedback. */
export function createPublicServer(platform: Platform): Express {
  return createServerApp(platform, 'public', { openApi: document, routes: publicRoutes(platform) });
}
