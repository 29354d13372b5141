import type { Router } from 'express';
import type { Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { signOnBody } from '../pages/sign-on.js';

/** Staff: the single sign-on connections, as the staff API lists them. */
export function mountSignOnRoutes(router: Router, dash: Dashboard): void {
  router.get('/sign-on', async (req, res) => {
    const body = signOnBody(dash.platform.identity.sso.describe(), dash.platform.config.passwordSignIn);
    await sendPage(dash, req, res, { title: 'Sign-on connections', body, current: '/sign-on' });
  });
}
