import type { Response } from 'express';
import type { Platform } from '../../platform/platform.js';
import { isSupervisor, isStaff, type Principal } from '../../features/auth/principal.js';
import { NotAuthenticatedError } from '../../kernel/errors/errors.js';
import { MembersService } from '../../features/identity/members.service.js';
import { usersStore } from '../../features/identity/users.store.js';
import { invocationsStore, type WorkloadCount } from '../../features/invocations/store.js';
import { DashboardSessions } from './sessions/sessions.js';
import { DashboardCookies } from './web/cookies.js';
import { CsrfTokens } from './web/csrf.js';
import { apiPages, type ApiPage } from './api-pages.js';

/** Where the auth server mounts the dashboard; every link and redirect starts with it. */
export const BASE = '/dashboard';
export const at = (path = '') => `${BASE}${path}`;

/** What every dashboard route works with: the platform's services plus the dashboard's own parts. */
export interface Dashboard {
  platform: Platform;
  sessions: DashboardSessions;
  cookies: DashboardCookies;
  csrf: CsrfTokens;
  members: MembersService;
  /** The servers' API pages the navigation links to. */
  apiPages: ApiPage[];
  /** Invocations queued and running per model version of each live workspace, beside the limits on the staff's page. */
  workloads: () => Promise<WorkloadCount[]>;
}

export function createDashboardContext(platform: Platform): Dashboard {
  const { config, identity } = platform;
  return {
    platform,
    sessions: new DashboardSessions({
      db: platform.db,
      box: platform.box,
      login: identity.login,
      workspaces: identity.workspaces,
      authenticator: platform.authenticator,
      now: platform.now,
      lifetimeSeconds: config.refreshTokenTtl,
    }),
    cookies: new DashboardCookies(config.dashboardUrl.startsWith('https:')),
    csrf: CsrfTokens.fromSigningKey(platform.keys),
    members: new MembersService(platform.db, { users: usersStore }),
    apiPages: apiPages(config),
    workloads: () => invocationsStore.workloadCounts(platform.db),
  };
}

/** Who is asking, as established for this request by `loadVisit`. */
export interface Visit {
  principal: Principal | undefined;
  /** The raw session id (from the cookie) of a live session. */
  sessionId: string | undefined;
  /** A session cookie came with the request but its session is over. */
  sessionEnded: boolean;
  /** What this visitor's CSRF tokens are bound to. */
  binding: string;
  csrfToken: string;
}

export const visitOf = (res: Response): Visit => res.locals.visit as Visit;

/** The signed-in principal; routes reach this only behind a guard that checked it. */
export function principalOf(res: Response): Principal {
  const principal = visitOf(res).principal;
  if (!principal) throw new NotAuthenticatedError('Sign in first.');
  return principal;
}

/** The workspace of a supervisor page (its guard checked the session is bound to one). */
export function workspaceOf(res: Response): { id: number; name: string } {
  const workspace = principalOf(res).workspace;
  if (!workspace) throw new NotAuthenticatedError('Choose a workspace first.');
  return workspace;
}

/** Supervisor pages need exactly what the API's supervisor endpoints need. */
export const supervises = (principal: Principal | undefined) => Boolean(principal?.workspace && isSupervisor(principal));
export const isStaffUser = (principal: Principal | undefined) => Boolean(principal && isStaff(principal));

/** Answers a form with a redirect (303: the browser follows with GET), optionally naming a notice. */
export function seeOther(res: Response, path: string, notice?: string): void {
  res.redirect(303, notice ? `${path}${path.includes('?') ? '&' : '?'}notice=${encodeURIComponent(notice)}` : path);
}
