import type { Request, Response, Router } from 'express';
import { principalOf, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { homeBody } from '../pages/home.js';
import { signedIn } from './visit.js';

export function mountHomeRoutes(router: Router, dash: Dashboard): void {
  router.get('/', signedIn, (req, res) => renderHome(dash, req, res));
}

export async function renderHome(dash: Dashboard, req: Request, res: Response, problem: { error?: string; status?: number } = {}): Promise<void> {
  const principal = principalOf(res);
  const workspaces = await dash.platform.identity.workspaces.memberships(principal, { limit: 200, offset: 0 });
  const title = principal.workspace ? principal.workspace.name : 'Welcome';
  await sendPage(dash, req, res, { title, body: homeBody(principal, workspaces, visitOf(res).csrfToken), current: '', ...problem });
}
