import type { Express } from 'express';
import type { Platform } from '../../platform/platform.js';
import { loadOpenApi } from '../../infra/http/openapi.js';
import { createServerApp } from '../shared/server-app.js';
import { privateRoutes } from './routes.js';

const document = loadOpenApi(new URL('./openapi.yaml', import.meta.url));

/** The private server: model registration, deployments, storage, metrics. */
export function createPrivateServer(platform: Platform): Express {
  return createServerApp(platform, 'private', { openApi: document, routes: privateRoutes(platform) });
}
