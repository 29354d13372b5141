import type { Request, RequestHandler } from 'express';
import { randomToken } from '../../../infra/crypto/random.js';
import { NotAllowedError } from '../../../kernel/errors/errors.js';
import { at, isStaffUser, seeOther, supervises, visitOf, type Dashboard, type Visit } from '../context.js';
import { field } from '../web/forms.js';

const BINDING = /^[A-Za-z0-9_-]{43}$/;

/**
 * Establishes who is asking: the principal of a live session (its cookie is
 * dropped once the session is over), and the value CSRF tokens are bound to,
 * which is the session id once signed in, else a random pre-session cookie.
 */
export function loadVisit(dash: Dashboard): RequestHandler {
  return async (req, res, next) => {
    const cookieId = dash.cookies.read(req, 'session');
    const principal = cookieId ? ((await dash.sessions.resume(cookieId)) ?? undefined) : undefined;
    if (cookieId && !principal) dash.cookies.clear(req, res, 'session');
    const sessionId = principal ? cookieId : undefined;
    let binding = sessionId ?? dash.cookies.read(req, 'csrf');
    if (!binding || !BINDING.test(binding)) {
      binding = randomToken(32);
      dash.cookies.write(req, res, 'csrf', binding);
    }
    const visit: Visit = { principal, sessionId, sessionEnded: Boolean(cookieId && !principal), binding, csrfToken: dash.csrf.tokenFor(binding) };
    res.locals.visit = visit;
    // Where the audit trail looks for the actor, as on the API's routes.
    res.locals.principal = principal;
    next();
  };
}

/** Every form post carries the token of this visitor; a session that ended meanwhile goes back to sign-in. */
export function checkCsrf(dash: Dashboard): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    const visit = visitOf(res);
    if (visit.sessionEnded) return seeOther(res, at('/sign-in'), 'session-ended');
    if (!dash.csrf.isValid(visit.binding, field(req, '_csrf'))) {
      throw new NotAllowedError('This form has expired or did not come from the dashboard. Go back, reload the page and try again.');
    }
    next();
  };
}

/** Pages for signed-in users: others go to sign-in and come back afterwards. */
export const signedIn: RequestHandler = (req, res, next) => {
  const visit = visitOf(res);
  if (visit.principal) return next();
  const back = req.method === 'GET' ? `next=${encodeURIComponent(req.originalUrl)}` : '';
  const notice = visit.sessionEnded ? 'notice=session-ended' : '';
  res.redirect(303, `${at('/sign-in')}${back || notice ? '?' : ''}${[back, notice].filter(Boolean).join('&')}`);
};

export const supervisorOnly: RequestHandler = (_req, res, next) => {
  if (!supervises(visitOf(res).principal)) throw new NotAllowedError('Only supervisors of this workspace can open this page.');
  next();
};

/** Pages of a member's own work (sessions, datasets) need what the public API needs: a session bound to a workspace. */
export const memberOnly: RequestHandler = (_req, res, next) => {
  if (!visitOf(res).principal?.workspace) throw new NotAllowedError('Choose a workspace first: sessions, datasets and aliases belong to one.');
  next();
};

export const staffOnly: RequestHandler = (_req, res, next) => {
  if (!isStaffUser(visitOf(res).principal)) throw new NotAllowedError('Only staff users can open this page.');
  next();
};

/** A path inside the dashboard to return to after sign-in; anything else (other sites, `//host`) is ignored. */
export function safeNext(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return undefined;
  if (!/^\/dashboard(?:[/?][^\\\s]*)?$/.test(value) || value.startsWith('//')) return undefined;
  return value;
}

export const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';
