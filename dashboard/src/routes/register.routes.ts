import type { Request, Response, Router } from 'express';
import { AppError, InputError } from '../../../kernel/errors/errors.js';
import { at, principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { acceptBody, invitationProblemBody, invitationProblemTitle, registerBody, type Invitation, type RegistrationDraft } from '../pages/register.js';
import { checked, field, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';
import { signedIn } from './visit.js';

const TITLE = 'Accept your invitation';

/** Registration from an invitation link, and acceptance by an already registered user. */
export function mountRegisterRoutes(router: Router, dash: Dashboard): void {
  const { invitations } = dash.platform.identity;

  router.get('/register', async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const invitation = await describe(dash, req, res, token);
    if (!invitation) return;
    const body = invitation.registered
      ? acceptBody({ csrfToken: visitOf(res).csrfToken, token, invitation, principal: visitOf(res).principal })
      : registerBody({ csrfToken: visitOf(res).csrfToken, token, invitation, links: linksOf(dash) });
    await sendPage(dash, req, res, { title: TITLE, body });
  });

  router.post('/register', async (req, res) => {
    const token = field(req, 'token');
    const draft: RegistrationDraft = {
      name: trimmed(req, 'name'),
      surname: trimmed(req, 'surname'),
      preferred_language: trimmed(req, 'preferred_language'),
      accept_terms: checked(req, 'accept_terms'),
      accept_privacy: checked(req, 'accept_privacy'),
    };
    const password = field(req, 'password');
    const outcome = await attempt(async () => {
      if (password !== field(req, 'password_confirm')) throw new InputError('The two passwords differ.', [{ field: 'password', message: 'the two passwords differ' }]);
      return invitations.register({ token, password, name: draft.name!, surname: draft.surname!, preferred_language: draft.preferred_language!, accept_terms: draft.accept_terms!, accept_privacy: draft.accept_privacy! });
    });
    if (!outcome.mistake) return seeOther(res, at(`/sign-in?workspace=${encodeURIComponent(outcome.value.workspaces[0]?.workspace ?? '')}`), 'registered');
    const invitation = await describe(dash, req, res, token);
    if (!invitation) return;
    const passwordProblem = problemOfPassword(outcome.mistake);
    const body = registerBody({ csrfToken: visitOf(res).csrfToken, token, invitation, draft, passwordProblem, links: linksOf(dash) });
    await sendPage(dash, req, res, { title: TITLE, body, status: outcome.mistake.status, error: passwordProblem ? 'Choose another password.' : outcome.mistake.message });
  });

  router.post('/register/accept', signedIn, async (req, res) => {
    const token = field(req, 'token');
    const outcome = await attempt(() => invitations.accept(principalOf(res), token));
    if (outcome.mistake) return sendProblem(dash, req, res, outcome.mistake);
    await dash.sessions.switchWorkspace(visitOf(res).sessionId!, principalOf(res), outcome.value.workspace);
    seeOther(res, at(), 'joined');
  });
}

/** The invitation behind a token, or (having answered with the reason) undefined. */
async function describe(dash: Dashboard, req: Request, res: Response, token: string): Promise<Invitation | undefined> {
  const outcome = await attempt(() => dash.platform.identity.invitations.describe(token));
  if (!outcome.mistake) return outcome.value;
  await sendProblem(dash, req, res, outcome.mistake);
  return undefined;
}

function sendProblem(dash: Dashboard, req: Request, res: Response, problem: AppError): Promise<void> {
  return sendPage(dash, req, res, { title: invitationProblemTitle(problem.code), body: invitationProblemBody(problem.code, problem.message), status: problem.status });
}

/** The password's own problems, listed under its field. */
function problemOfPassword(mistake: AppError): string | undefined {
  const problems = (mistake.details ?? []).filter((detail) => detail.field === 'password').map((detail) => detail.message);
  if (!problems.length) return undefined;
  return mistake.message.startsWith('password:') ? `The password needs ${problems.join('; ')}.` : mistake.message;
}

const linksOf = (dash: Dashboard) => ({ termsUrl: dash.platform.config.termsUrl, privacyUrl: dash.platform.config.privacyUrl });
