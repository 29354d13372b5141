import type { Request, Response, Router } from 'express';
import { at, principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { deleteWorkspaceBody, workspacesBody, type WorkspacesPage } from '../pages/workspaces.js';
import { checked, field, idParam, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';

/** Staff: every workspace; create, disable or enable, delete after typing its name. */
export function mountWorkspaceRoutes(router: Router, dash: Dashboard): void {
  const workspaces = dash.platform.identity.workspaces;

  router.get('/workspaces', (req, res) => renderWorkspaces(dash, req, res));

  router.post('/workspaces', async (req, res) => {
    const draft = { name: trimmed(req, 'name'), disabled: checked(req, 'disabled') };
    const outcome = await attempt(() => workspaces.create(principalOf(res), draft));
    if (outcome.mistake) return renderWorkspaces(dash, req, res, { draft }, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, at('/workspaces'), 'workspace-created');
  });

  router.post('/workspaces/:id/disabled', async (req, res) => {
    const disabled = field(req, 'disabled') === 'true';
    await workspaces.setDisabled(idParam(req), disabled);
    seeOther(res, at('/workspaces'), disabled ? 'workspace-disabled' : 'workspace-enabled');
  });

  router.get('/workspaces/:id/delete', async (req, res) => {
    const workspace = await workspaces.get(idParam(req));
    await sendPage(dash, req, res, { title: `Delete ${workspace.name}`, body: deleteWorkspaceBody({ csrfToken: visitOf(res).csrfToken, workspace }), current: '/workspaces' });
  });

  router.post('/workspaces/:id/delete', async (req, res) => {
    const workspace = await workspaces.get(idParam(req));
    if (trimmed(req, 'confirm_name') !== workspace.name) {
      const body = deleteWorkspaceBody({ csrfToken: visitOf(res).csrfToken, workspace, problem: `Type ${workspace.name} exactly.` });
      return sendPage(dash, req, res, { title: `Delete ${workspace.name}`, body, current: '/workspaces', status: 400, error: 'The name does not match: nothing was deleted.' });
    }
    await workspaces.remove(workspace.id);
    seeOther(res, at('/workspaces'), 'workspace-deleted');
  });
}

async function renderWorkspaces(dash: Dashboard, req: Request, res: Response, extra: Partial<WorkspacesPage> = {}, problem: { error?: string; status?: number } = {}) {
  const { items, total } = await dash.platform.identity.workspaces.list(principalOf(res), { limit: 1000, offset: 0 });
  const page: WorkspacesPage = { csrfToken: visitOf(res).csrfToken, workspaces: items, total, ...extra };
  await sendPage(dash, req, res, { title: 'All workspaces', body: workspacesBody(page), current: '/workspaces', ...problem });
}
