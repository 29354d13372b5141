import type { Request, Response, Router } from 'express';
import { at, principalOf, seeOther, visitOf, workspaceOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { applicationsBody, type ApplicationsPage } from '../pages/applications.js';
import { idParam, roleOf, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';

/** OAuth applications: create (client id and secret shown once), rotate the secret, delete. */
export function mountApplicationRoutes(router: Router, dash: Dashboard): void {
  const oauth = dash.platform.identity.oauth;

  router.get('/applications', (req, res) => renderApplications(dash, req, res));

  router.post('/applications', async (req, res) => {
    const draft = { name: trimmed(req, 'name'), role: trimmed(req, 'role') };
    const outcome = await attempt(() => oauth.create(principalOf(res), workspaceOf(res).id, { name: draft.name, role: roleOf(draft.role) }));
    if (outcome.mistake) return renderApplications(dash, req, res, { draft }, { error: outcome.mistake.message, status: outcome.mistake.status });
    const { client_id, client_secret, application } = outcome.value;
    await renderApplications(dash, req, res, { credentials: { name: application.name, client_id, client_secret, rotated: false } });
  });

  router.post('/applications/:id/rotate', async (req, res) => {
    const id = idParam(req);
    const { client_id, client_secret } = await oauth.rotateSecret(principalOf(res), workspaceOf(res).id, id);
    const apps = await oauth.list(principalOf(res), workspaceOf(res).id);
    const name = apps.find((app) => app.id === id)?.name ?? client_id;
    await renderApplications(dash, req, res, { credentials: { name, client_id, client_secret, rotated: true } });
  });

  router.post('/applications/:id/delete', async (req, res) => {
    await oauth.remove(principalOf(res), workspaceOf(res).id, idParam(req));
    seeOther(res, at('/applications'), 'application-deleted');
  });
}

async function renderApplications(dash: Dashboard, req: Request, res: Response, extra: Partial<ApplicationsPage> = {}, problem: { error?: string; status?: number } = {}) {
  const applications = await dash.platform.identity.oauth.list(principalOf(res), workspaceOf(res).id);
  const page: ApplicationsPage = { csrfToken: visitOf(res).csrfToken, workspace: workspaceOf(res).name, applications, ...extra };
  await sendPage(dash, req, res, { title: 'OAuth applications', body: applicationsBody(page), current: '/applications', ...problem });
}
