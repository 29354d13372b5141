import type { Request, Response, Router } from 'express';
import { at, principalOf, seeOther, visitOf, workspaceOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { membersBody, type MembersPage } from '../pages/members.js';
import { idParam, roleOf, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';

/** Members, invitations by e-mail and role, pending invitations and their revocation. */
export function mountMemberRoutes(router: Router, dash: Dashboard): void {
  const invitations = dash.platform.identity.invitations;

  router.get('/members', (req, res) => renderMembers(dash, req, res));

  router.post('/members/invitations', async (req, res) => {
    const draft = { email: trimmed(req, 'email'), role: trimmed(req, 'role') };
    const outcome = await attempt(() => invitations.invite(principalOf(res), { email: draft.email, role: roleOf(draft.role), workspace_id: workspaceOf(res).id }));
    if (outcome.mistake) return renderMembers(dash, req, res, { draft }, { error: outcome.mistake.message, status: outcome.mistake.status });
    await renderMembers(dash, req, res, { invited: { email: outcome.value.email, url: outcome.value.invitation_url ?? '' } });
  });

  router.post('/members/invitations/:id/revoke', async (req, res) => {
    await invitations.revoke(principalOf(res), workspaceOf(res).id, idParam(req));
    seeOther(res, at('/members'), 'invitation-revoked');
  });
}

async function renderMembers(dash: Dashboard, req: Request, res: Response, extra: Partial<MembersPage> = {}, problem: { error?: string; status?: number } = {}) {
  const principal = principalOf(res);
  const workspaceId = workspaceOf(res).id;
  const [members, pending] = await Promise.all([dash.members.list(principal, workspaceId), dash.platform.identity.invitations.listPending(principal, workspaceId, { limit: 1000, offset: 0 })]);
  const page: MembersPage = { csrfToken: visitOf(res).csrfToken, members, pending: pending.items, ...extra };
  await sendPage(dash, req, res, { title: 'Members', body: membersBody(page), current: '/members', ...problem });
}
