import type { Request, Response, Router } from 'express';
import { principalOf, seeOther, supervises, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { field, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';
import { olderOf, pageAt } from './listing.js';
import { signedIn, supervisorOnly } from './visit.js';
import { aliasBody, HISTORY_PER_PAGE } from '../pages/alias.js';
import { aliasPath, modelAliasesBody, type ModelAliasesPage } from '../pages/model-aliases.js';
import { draftOf, policyBodyOf, POLICY_FIELDS, type PolicyDraft } from '../pages/alias-policy-form.js';

const CURRENT = '/aliases';

/**
 * A model code's aliases and one alias's page for every member; setting,
 * moving (promoting) an alias and setting or deleting its traffic policy for
 * supervisors, through the same services as the private API.
 */
export function mountModelAliasRoutes(router: Router, dash: Dashboard): void {
  const { aliases, aliasPolicies } = dash.platform.services;

  router.get('/aliases/:code', (req, res) => renderAliases(dash, req, res));

  router.post('/aliases/:code', signedIn, supervisorOnly, async (req, res) => {
    const draft = { alias: trimmed(req, 'alias'), version: trimmed(req, 'version') };
    const outcome = await attempt(() => aliases.set(principalOf(res), codeOf(req), draft.alias, draft.version, String(req.id)));
    if (outcome.mistake) return renderAliases(dash, req, res, draft, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, aliasPath(codeOf(req), outcome.value.alias), 'alias-set');
  });

  router.get('/aliases/:code/:alias', (req, res) => renderAlias(dash, req, res));

  router.post('/aliases/:code/:alias', signedIn, supervisorOnly, async (req, res) => {
    const version = trimmed(req, 'version');
    // A move of an alias the workspace does not have is a 404, never a new alias.
    await aliases.get(principalOf(res), codeOf(req), aliasOf(req));
    const outcome = await attempt(() => aliases.set(principalOf(res), codeOf(req), aliasOf(req), version, String(req.id)));
    if (outcome.mistake) return renderAlias(dash, req, res, { moveDraft: version }, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, aliasPath(codeOf(req), aliasOf(req)), 'alias-moved');
  });

  router.post('/aliases/:code/:alias/policy', signedIn, supervisorOnly, async (req, res) => {
    const draft = Object.fromEntries(POLICY_FIELDS.map((name) => [name, field(req, name)])) as unknown as PolicyDraft;
    const outcome = await attempt(() => aliasPolicies.set(principalOf(res), codeOf(req), aliasOf(req), policyBodyOf(draft), String(req.id)));
    if (outcome.mistake) return renderAlias(dash, req, res, { policyDraft: draft }, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, aliasPath(codeOf(req), aliasOf(req)), 'alias-policy-set');
  });

  router.post('/aliases/:code/:alias/policy/delete', signedIn, supervisorOnly, async (req, res) => {
    await aliasPolicies.remove(principalOf(res), codeOf(req), aliasOf(req), String(req.id));
    seeOther(res, aliasPath(codeOf(req), aliasOf(req)), 'alias-policy-deleted');
  });
}

async function renderAliases(dash: Dashboard, req: Request, res: Response, draft?: ModelAliasesPage['draft'], problem: { error?: string; status?: number } = {}) {
  const principal = principalOf(res);
  const { items } = await dash.platform.services.aliases.list(principal, codeOf(req), { limit: 1000, offset: 0 });
  const csrfToken = supervises(principal) ? visitOf(res).csrfToken : undefined;
  const body = modelAliasesBody({ code: codeOf(req), aliases: items, csrfToken, draft });
  await sendPage(dash, req, res, { title: `Aliases of ${codeOf(req)}`, body, current: CURRENT, ...problem });
}

async function renderAlias(dash: Dashboard, req: Request, res: Response, drafts: { moveDraft?: string; policyDraft?: PolicyDraft } = {}, problem: { error?: string; status?: number } = {}) {
  const principal = principalOf(res);
  const { aliases } = dash.platform.services;
  const alias = await aliases.get(principal, codeOf(req), aliasOf(req));
  let supervisor;
  if (supervises(principal)) {
    const page = pageAt(req, HISTORY_PER_PAGE);
    const [history, members] = await Promise.all([aliases.history(principal, codeOf(req), aliasOf(req), page), dash.members.list(principal, principal.workspace!.id)]);
    const emails = new Map(members.map((member) => [String(member.id), member.email]));
    const policyDraft = drafts.policyDraft ?? draftOf(alias.policy, alias.version);
    supervisor = { csrfToken: visitOf(res).csrfToken, moveDraft: drafts.moveDraft ?? '', policyDraft, history: history.items, emails, older: olderOf(history), paged: Boolean(page.after) };
  }
  const body = aliasBody({ alias, supervisor });
  await sendPage(dash, req, res, { title: `Alias ${alias.alias} of ${alias.model_code}`, body, current: CURRENT, ...problem });
}

const codeOf = (req: Request) => String(req.params.code);
const aliasOf = (req: Request) => String(req.params.alias);
