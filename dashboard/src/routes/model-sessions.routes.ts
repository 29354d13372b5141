import type { Request, Router } from 'express';
import { MAX_LIMIT } from '../../../infra/http/pagination.js';
import { InputError } from '../../../kernel/errors/errors.js';
import { principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { relatedInvocations, threadsOf } from '../invocations/threads.js';
import { modelKey, parseModelKey, sessionsLink, type ModelRef } from '../pages/links.js';
import { sessionsBody, type SessionState } from '../pages/model-sessions.js';
import { sessionBody } from '../pages/session-invocations.js';
import { field, uuidParam } from '../web/forms.js';
import { modelChoices, olderOf, pageAt } from './listing.js';

const SESSIONS_PER_PAGE = 20;
const INVOCATIONS_PER_PAGE = 10;

/**
 * The caller's sessions of a model and each session's invocations, read
 * through the public API's invocations service with the caller's principal:
 * only their own sessions, as the API shows them.
 */
export function mountModelSessionRoutes(router: Router, dash: Dashboard): void {
  const { invocations, catalog } = dash.platform.services;

  router.get('/sessions', async (req, res) => {
    const principal = principalOf(res);
    const models = await modelChoices(dash, principal);
    const chosen = typeof req.query.model === 'string' ? req.query.model : models[0]?.value;
    const model = chosen === undefined ? undefined : modelOf(chosen);
    const state = stateOf(req.query.state);
    const page = pageAt(req, SESSIONS_PER_PAGE);
    const found = model ? await invocations.listSessions(principal, model.code, model.version, page, { state }) : { items: [], total: 0, next: undefined };
    const body = sessionsBody({ csrfToken: visitOf(res).csrfToken, models, model, state, sessions: found.items, total: found.total, older: olderOf(found), paged: Boolean(page.after) });
    await sendPage(dash, req, res, { title: 'Sessions', body, current: '/sessions' });
  });

  router.post('/sessions/:code/:version/:id/state', async (req, res) => {
    const model = modelOfPath(req);
    const state = stateOf(field(req, 'state'));
    if (!state) throw new InputError('state: OPEN or CLOSED.');
    await invocations.setSessionState(principalOf(res), model.code, model.version, uuidParam(req), state);
    seeOther(res, sessionsLink({ model: modelKey(model), state: stateOf(field(req, 'shown')) }), state === 'CLOSED' ? 'session-closed' : 'session-reopened');
  });

  router.get('/sessions/:code/:version/:id', async (req, res) => {
    const principal = principalOf(res);
    const { code, version } = modelOfPath(req);
    const sessionId = uuidParam(req);
    const row = await catalog.forReading(principal, code, version);
    const kind = row.explains_id === null ? 'PREDICT' : 'EXPLAIN';
    const page = pageAt(req, INVOCATIONS_PER_PAGE);
    const found = await invocations.list(principal, code, version, sessionId, page, { type: kind });
    const related = await relatedInvocations(
      found.items.map((i) => i.id),
      (relatedTo) => invocations.list(principal, code, version, sessionId, { limit: MAX_LIMIT, offset: 0 }, { relatedTo }),
    );
    const body = sessionBody({
      model: { code, version, name: row.name },
      sessionId,
      kind,
      threads: threadsOf(found.items, related.items),
      total: found.total,
      older: olderOf(found),
      paged: Boolean(page.after),
      complete: related.complete,
    });
    await sendPage(dash, req, res, { title: 'Session', body, current: '/sessions' });
  });
}

function modelOf(value: string): ModelRef {
  const model = parseModelKey(value);
  if (!model) throw new InputError('model: choose a model of the list.');
  return model;
}

function modelOfPath(req: Request): ModelRef {
  return { code: String(req.params.code), version: String(req.params.version) };
}

function stateOf(value: unknown): SessionState | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'OPEN' || value === 'CLOSED') return value;
  throw new InputError('state: OPEN or CLOSED.');
}
