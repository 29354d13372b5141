import type { Request, Response, Router } from 'express';
import { at, principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { deleteWorkspaceBody, draftOf, quotaBody, workspacesBody, type QuotaDraft, type WorkspacesPage } from '../pages/workspaces.js';
import { checked, field, idParam, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';
import type { QuotaChange } from '../../../features/identity/workspaces.service.js';
import { usageByWorkspace } from '../workspace-usage.js';

/** Staff: every workspace; create, disable or enable, set its weight and limits, delete after typing its name. */
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

  router.get('/workspaces/:id/quota', async (req, res) => {
    const id = idParam(req);
    const [workspace, quota] = await Promise.all([workspaces.get(id), workspaces.quota(principalOf(res), id)]);
    const body = quotaBody({ csrfToken: visitOf(res).csrfToken, workspace, draft: draftOf(quota) });
    await sendPage(dash, req, res, { title: `Limits of ${workspace.name}`, body, current: '/workspaces' });
  });

  router.post('/workspaces/:id/quota', async (req, res) => {
    const workspace = await workspaces.get(idParam(req));
    const draft: QuotaDraft = { share_weight: trimmed(req, 'share_weight'), max_in_flight: trimmed(req, 'max_in_flight'), max_queued: trimmed(req, 'max_queued') };
    const outcome = await attempt(() => workspaces.setQuota(workspace.id, quotaChangeOf(draft)));
    if (outcome.mistake) {
      const problems = Object.fromEntries((outcome.mistake.details ?? []).filter((d) => d.field).map((d) => [d.field, d.message]));
      const body = quotaBody({ csrfToken: visitOf(res).csrfToken, workspace, draft, problems });
      return sendPage(dash, req, res, { title: `Limits of ${workspace.name}`, body, current: '/workspaces', status: outcome.mistake.status, error: 'Nothing was changed: correct the fields marked below.' });
    }
    seeOther(res, at('/workspaces'), 'workspace-quota-set');
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

/** A form's text as a change: empty is no limit; anything not a whole number reaches the service's check as NaN. */
function quotaChangeOf(draft: QuotaDraft): QuotaChange {
  const number = (text: string) => (/^\d{1,10}$/.test(text) ? Number(text) : Number.NaN);
  return {
    share_weight: number(draft.share_weight),
    max_in_flight: draft.max_in_flight === '' ? null : number(draft.max_in_flight),
    max_queued: draft.max_queued === '' ? null : number(draft.max_queued),
  };
}

async function renderWorkspaces(dash: Dashboard, req: Request, res: Response, extra: Partial<WorkspacesPage> = {}, problem: { error?: string; status?: number } = {}) {
  const { items, total } = await dash.platform.identity.workspaces.list(principalOf(res), { limit: 1000, offset: 0 });
  const [quotas, workloads] = await Promise.all([dash.platform.identity.workspaces.quotas(items.map((w) => w.id)), dash.workloads()]);
  const usage = usageByWorkspace(workloads);
  const listed = items.map((w) => ({ ...w, quota: quotas.get(w.id), usage: usage.get(w.name) ?? { inFlight: 0, queued: 0 } }));
  const page: WorkspacesPage = { csrfToken: visitOf(res).csrfToken, workspaces: listed, total, ...extra };
  await sendPage(dash, req, res, { title: 'All workspaces', body: workspacesBody(page), current: '/workspaces', ...problem });
}
