import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';
import type { Platform } from '../../platform/platform.js';
import { BASE, createDashboardContext } from './context.js';
import { securityHeaders } from './web/security-headers.js';
import { formBodies } from './web/forms.js';
import { checkCsrf, loadVisit, memberOnly, signedIn, staffOnly, supervisorOnly } from './routes/visit.js';
import { mountSessionRoutes } from './routes/session.routes.js';
import { mountSsoRoutes } from './routes/sso.routes.js';
import { mountRegisterRoutes } from './routes/register.routes.js';
import { mountHomeRoutes } from './routes/home.routes.js';
import { mountTokenRoutes } from './routes/tokens.routes.js';
import { mountApplicationRoutes } from './routes/applications.routes.js';
import { mountMemberRoutes } from './routes/members.routes.js';
import { mountSettingsRoutes } from './routes/settings.routes.js';
import { mountOverviewRoutes } from './routes/overview.routes.js';
import { mountMetricRoutes } from './routes/metrics.routes.js';
import { mountWorkspaceRoutes } from './routes/workspaces.routes.js';
import { mountWebhookRoutes } from './routes/webhooks.routes.js';
import { mountAuditRoutes } from './routes/audit.routes.js';
import { mountModelSessionRoutes } from './routes/model-sessions.routes.js';
import { mountDatasetRoutes } from './routes/datasets.routes.js';
import { mountSignOnRoutes } from './routes/sign-on.routes.js';
import { mountOfferedRoutes } from './routes/offered.routes.js';
import { mountAliasRoutes } from './routes/aliases.routes.js';
import { mountModelAliasRoutes } from './routes/model-aliases.routes.js';
import { errorPages, pageNotFound } from './routes/errors.js';

// Compiled or not, the assets sit beside src/: dashboard/public, dist/dashboard/public.
const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url));

/** Query parameters that hold an invitation token: `token` on /register, and `next`, which may link back there. */
export const DASHBOARD_SECRET_QUERY = ['token', 'next'];

const SUPERVISOR_SECTIONS = ['/tokens', '/applications', '/members', '/settings', '/models', '/deployments', '/storage', '/metrics', '/webhooks'];
const STAFF_SECTIONS = ['/workspaces', '/sign-on'];
/** What members do in their workspace: their sessions and datasets, and read its models' aliases. */
const MEMBER_SECTIONS = ['/sessions', '/datasets', '/aliases'];
/** Supervisors read their workspace's trail, staff every one: the trail itself decides, as on the API. */
const AUDIT_SECTIONS = ['/audit'];

/**
 * The web dashboard, mounted by the auth server under /dashboard. Pages are
 * rendered here; every action goes through the platform's services with the
 * signed-in user's Principal, exactly as the API would.
 */
export function createDashboard(platform: Platform): Router {
  const dash = createDashboardContext(platform);
  const app = Router();
  app.use(securityHeaders);
  app.use('/static', express.static(PUBLIC_DIR, { index: false, maxAge: '1h', fallthrough: false }));
  app.use(formBodies({ maxBodyBytes: platform.config.maxBodyBytes, maxFileBytes: platform.config.maxLogoBytes }));
  app.use(loadVisit(dash));
  app.use(checkCsrf(dash));

  // Guards first, by section: a page is reached only by those the API would let do the same.
  app.use(SUPERVISOR_SECTIONS, signedIn, supervisorOnly);
  app.use(STAFF_SECTIONS, signedIn, staffOnly);
  app.use(AUDIT_SECTIONS, signedIn);
  app.use(MEMBER_SECTIONS, signedIn, memberOnly);

  mountSessionRoutes(app, dash);
  mountSsoRoutes(app, dash);
  mountRegisterRoutes(app, dash);
  mountHomeRoutes(app, dash);
  mountTokenRoutes(app, dash);
  mountApplicationRoutes(app, dash);
  mountMemberRoutes(app, dash);
  mountSettingsRoutes(app, dash);
  mountOverviewRoutes(app, dash);
  mountOfferedRoutes(app, dash);
  mountMetricRoutes(app, dash);
  mountWorkspaceRoutes(app, dash);
  mountSignOnRoutes(app, dash);
  mountWebhookRoutes(app, dash);
  mountAuditRoutes(app, dash);
  mountModelSessionRoutes(app, dash);
  mountDatasetRoutes(app, dash);
  mountAliasRoutes(app, dash);
  mountModelAliasRoutes(app, dash);
  app.use(pageNotFound(dash));
  app.use(errorPages(dash));
  return Router().use(BASE, app);
}
