import type { Router } from 'express';
import { at, principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { signInBody } from '../pages/sign-in.js';
import { field, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';
import { clientAddress, safeNext, signedIn } from './visit.js';
import { renderHome } from './home.routes.js';
import { moveOn } from './sso.routes.js';

/** Sign-in, sign-out and the workspace switcher. */
export function mountSessionRoutes(router: Router, dash: Dashboard): void {
  router.get('/sign-in', async (req, res) => {
    const next = safeNext(req.query.next);
    if (visitOf(res).principal) return seeOther(res, next ?? at());
    const workspace = typeof req.query.workspace === 'string' ? req.query.workspace : undefined;
    await sendPage(dash, req, res, { title: 'Sign in', body: signInBody({ csrfToken: visitOf(res).csrfToken, workspace, next, connections: dash.platform.identity.sso.list() }) });
  });

  router.post('/sign-in', async (req, res) => {
    const credentials = { email: trimmed(req, 'email'), password: field(req, 'password'), workspace: trimmed(req, 'workspace') || null };
    const next = safeNext(field(req, 'next'));
    const outcome = await attempt(() => dash.sessions.signIn(credentials, clientAddress(req)));
    if (outcome.mistake) {
      const body = signInBody({ csrfToken: visitOf(res).csrfToken, email: credentials.email, workspace: credentials.workspace ?? '', next, connections: dash.platform.identity.sso.list() });
      return sendPage(dash, req, res, { title: 'Sign in', body, status: outcome.mistake.status, error: outcome.mistake.message });
    }
    // A fresh id for the new session (no fixation); the pre-session cookie has done its job.
    dash.cookies.write(req, res, 'session', outcome.value);
    dash.cookies.clear(req, res, 'csrf');
    seeOther(res, next ?? at());
  });

  router.post('/sign-out', async (req, res) => {
    const { sessionId } = visitOf(res);
    const refresh = sessionId ? await dash.sessions.refreshTokenOf(sessionId) : undefined;
    // A single sign-on's session at the provider ends too: the browser goes there next.
    const providerLogout = refresh ? await dash.platform.identity.sso.providerLogoutUrl(refresh) : null;
    if (sessionId) await dash.sessions.signOut(sessionId);
    dash.cookies.clear(req, res, 'session');
    if (providerLogout) return moveOn(res, providerLogout, 'Signed out');
    seeOther(res, at('/sign-in'), 'signed-out');
  });

  router.post('/workspace', signedIn, async (req, res) => {
    const workspace = trimmed(req, 'workspace') || null;
    const outcome = await attempt(() => dash.sessions.switchWorkspace(visitOf(res).sessionId!, principalOf(res), workspace));
    if (outcome.mistake) return renderHome(dash, req, res, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, at(), 'switched');
  });
}
