import type { Request, Response, Router } from 'express';
import { at, principalOf, seeOther, visitOf, workspaceOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { tokensBody, type TokensPage } from '../pages/tokens.js';
import { field, idParam, trimmed } from '../web/forms.js';
import { attempt } from './outcome.js';

const DAY_MS = 86_400_000;
const DEFAULT_VALIDITY_DAYS = 90;

/** API tokens: create (key shown once), list with last use, revoke, re-enable, delete. */
export function mountTokenRoutes(router: Router, dash: Dashboard): void {
  const tokens = dash.platform.identity.apiTokens;

  router.get('/tokens', (req, res) => renderTokens(dash, req, res));

  router.post('/tokens', async (req, res) => {
    const input = { name: trimmed(req, 'name'), expiration_date: trimmed(req, 'expiration_date') };
    const outcome = await attempt(() => tokens.create(principalOf(res), workspaceOf(res).id, input));
    if (outcome.mistake) return renderTokens(dash, req, res, { draft: input }, { error: outcome.mistake.message, status: outcome.mistake.status });
    await renderTokens(dash, req, res, { created: { key: outcome.value.key, name: outcome.value.token.name } });
  });

  router.post('/tokens/:id/active', async (req, res) => {
    const active = field(req, 'is_active') === 'true';
    await tokens.setActive(principalOf(res), workspaceOf(res).id, idParam(req), active);
    seeOther(res, at('/tokens'), active ? 'token-enabled' : 'token-revoked');
  });

  router.post('/tokens/:id/delete', async (req, res) => {
    await tokens.remove(principalOf(res), workspaceOf(res).id, idParam(req));
    seeOther(res, at('/tokens'), 'token-deleted');
  });
}

async function renderTokens(dash: Dashboard, req: Request, res: Response, extra: Partial<TokensPage> = {}, problem: { error?: string; status?: number } = {}) {
  const { items } = await dash.platform.identity.apiTokens.list(principalOf(res), workspaceOf(res).id, { limit: 1000, offset: 0 });
  const now = dash.platform.now();
  const page: TokensPage = {
    csrfToken: visitOf(res).csrfToken,
    tokens: items,
    today: new Date(now).toISOString().slice(0, 10),
    defaultExpiry: new Date(now + DEFAULT_VALIDITY_DAYS * DAY_MS).toISOString().slice(0, 10),
    ...extra,
  };
  await sendPage(dash, req, res, { title: 'API tokens', body: tokensBody(page), current: '/tokens', ...problem });
}
