import type { Request, Response, Router } from 'express';
import { randomToken } from '../../../infra/crypto/random.js';
import type { AppError } from '../../../kernel/errors/errors.js';
import { at, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { signInBody } from '../pages/sign-in.js';
import { html, toDocument } from '../web/html.js';
import { appRequestOf } from '../../../features/identity/sso/apps.js';
import { attempt } from './outcome.js';
import { clientAddress, safeNext } from './visit.js';

/** Single sign-on: off to the provider, and back with a session of this dashboard. */
export function mountSsoRoutes(router: Router, dash: Dashboard): void {
  const sso = dash.platform.identity.sso;

  // A native app (the CLI) starts here too, with its loopback redirect_uri, code_challenge and state (docs/sso.md).
  router.get('/sso/:connection', async (req, res) => {
    const next = safeNext(req.query.next);
    if (visitOf(res).principal && req.query.redirect_uri === undefined) return seeOther(res, next ?? at());
    // What binds the sign-in to this browser: the provider's redirect back must come with it.
    const browser = randomToken(32);
    const outcome = await attempt(async () => sso.begin(String(req.params.connection), browser, next ?? null, appRequestOf(req.query), clientAddress(req)));
    if (outcome.mistake) return refused(dash, req, res, outcome.mistake);
    dash.cookies.write(req, res, 'sso', browser);
    res.redirect(303, outcome.value);
  });

  router.get('/sso/:connection/callback', async (req, res) => {
    const browser = dash.cookies.read(req, 'sso');
    dash.cookies.clear(req, res, 'sso');
    const query = new URL(req.originalUrl, 'http://dashboard').searchParams;
    const outcome = await attempt(async () => {
      const { grant, returnTo, app } = await sso.complete(String(req.params.connection), query, browser);
      if (app) return { kind: 'app' as const, location: await sso.appReturn(app, grant) };
      return { kind: 'dashboard' as const, sessionId: await dash.sessions.signInVerified((await sso.issue(grant)).tokens), returnTo };
    });
    if (outcome.mistake) return refused(dash, req, res, outcome.mistake);
    // Back to the native app that started it: its own listener takes the code.
    if (outcome.value.kind === 'app') return res.redirect(303, outcome.value.location);
    dash.cookies.write(req, res, 'session', outcome.value.sessionId);
    dash.cookies.clear(req, res, 'csrf');
    moveOn(res, outcome.value.returnTo ?? at(), 'Signed in');
  });
}

function refused(dash: Dashboard, req: Request, res: Response, mistake: AppError): Promise<void> {
  const body = signInBody({ csrfToken: visitOf(res).csrfToken, connections: dash.platform.identity.sso.list() });
  return sendPage(dash, req, res, { title: 'Sign in', body, status: mistake.status, error: mistake.message });
}

/**
 * A page that sends the browser on, rather than a redirect: after a sign-in
 * the response ends a navigation that began at the provider (cross-site),
 * and a browser would not send the SameSite=Strict session cookie along a
 * redirect of it; after a sign-out, a redirect of the form's POST to the
 * provider would break the pages' `form-action 'self'`.
 */
export function moveOn(res: Response, url: string, title: string): void {
  const page = html`<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${url}"><title>${title}</title></head><body><p>${title}. <a href="${url}">Continue</a></p></body></html>`;
  res.status(200).type('html').send(toDocument(page));
}
