import type { Request, Response, Router } from 'express';
import { MAX_LIMIT } from '../../../infra/http/pagination.js';
import { AppError, InputError } from '../../../kernel/errors/errors.js';
import { principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { relatedInvocations, threadsOf } from '../invocations/threads.js';
import { olderThanPage } from '../invocations/positions.js';
import { modelKey, parseModelKey, sessionLink, sessionsLink, type ModelRef } from '../pages/links.js';
import { sessionsBody, type SessionState } from '../pages/model-sessions.js';
import { sessionBody } from '../pages/session-invocations.js';
import { predictionForm } from '../pages/prediction-form.js';
import { bodyFromForm, formName, inputFields, valuesFromBody, type InputField } from '../invocations/input-form.js';
import { checked, field, uuidParam } from '../web/forms.js';
import { modelChoices, olderOf, pageAt } from './listing.js';
import type { Choice } from '../pages/components.js';
import type { Principal } from '../../../features/auth/principal.js';

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
    const chosen = typeof req.query.model === 'string' ? req.query.model : await defaultModel(principal, models);
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

  router.post('/sessions/:code/:version', async (req, res) => {
    const model = modelOfPath(req);
    const session = await invocations.createSession(principalOf(res), model.code, model.version);
    seeOther(res, sessionLink(model, session.id), 'session-opened');
  });

  router.get('/sessions/:code/:version/:id', async (req, res) => {
    await showSession(req, res);
  });

  router.post('/sessions/:code/:version/:id/predictions', async (req, res) => {
    const principal = principalOf(res);
    const model = modelOfPath(req);
    const sessionId = uuidParam(req);
    const row = await catalog.forReading(principal, model.code, model.version);
    const fields = inputFields(row.input_schema);
    const submitted: Submitted = { values: Object.fromEntries(fields.map((f) => [f.name, field(req, formName(f))])), withExplanation: checked(req, 'with_explanation') };
    const built = bodyFromForm(fields, submitted.values);
    if (built.body === undefined) return showSession(req, res, { ...submitted, problems: built.problems, error: 'Some fields could not be read; nothing was queued.', status: 400 });
    try {
      const type = row.input_schema.type === 'file' ? 'OTHER' : 'FEATURES';
      await invocations.invoke(principal, model.code, model.version, sessionId, { type: 'PREDICT', request: { type, body: built.body }, with_explanation: submitted.withExplanation || undefined });
    } catch (error) {
      if (!(error instanceof AppError) || !REFUSALS_SHOWN_ON_THE_FORM.has(error.status)) throw error;
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
      return showSession(req, res, { ...submitted, ...refusalOf(error.message, fields), status: error.status });
    }
    seeOther(res, sessionLink(model, sessionId), 'prediction-queued');
  });

  /** The model of the caller's newest session, else the first of the list. */
  async function defaultModel(principal: Principal, models: Choice[]): Promise<string | undefined> {
    const used = models.length ? await invocations.lastUsedModel(principal) : undefined;
    return used ? modelKey(used) : models[0]?.value;
  }

  /** A session's page: a page of its predictions, and the form for a new one (with what was refused, if anything). */
  async function showSession(req: Request, res: Response, refused?: Submitted & { problems?: Record<string, string>; error?: string; status: number }): Promise<void> {
    const principal = principalOf(res);
    const { code, version } = modelOfPath(req);
    const sessionId = uuidParam(req);
    const row = await catalog.forReading(principal, code, version);
    const kind = row.explains_id === null ? 'PREDICT' : 'EXPLAIN';
    const page = pageAt(req, INVOCATIONS_PER_PAGE);
    const found = await invocations.list(principal, code, version, sessionId, page, { type: kind });
    const olderCount = await olderThanPage(found.next, (window) => invocations.list(principal, code, version, sessionId, { offset: 0, ...window }, { type: kind }));
    const related = await relatedInvocations(
      found.items.map((i) => i.id),
      (relatedTo) => invocations.list(principal, code, version, sessionId, { limit: MAX_LIMIT, offset: 0 }, { relatedTo }),
    );
    const model = { code, version, name: row.name };
    // Predictions are sent to the model's own sessions; an explainer's are fed by them.
    let form;
    if (kind === 'PREDICT') {
      const fields = inputFields(row.input_schema);
      // Filled in with the newest prediction's input, so that the next one changes only what differs.
      const last = page.after ? undefined : found.items[0];
      const values = last ? valuesFromBody(fields, last.request.body) : undefined;
      const explainable = Boolean(await catalog.explainerOf(row));
      form = predictionForm({ action: `${sessionLink(model, sessionId)}/predictions`, csrfToken: visitOf(res).csrfToken, fields, description: row.input_schema.description, explainable, values, ...refused });
    }
    const body = sessionBody({
      model,
      sessionId,
      kind,
      threads: threadsOf(found.items, related.items),
      total: found.total,
      olderCount,
      older: olderOf(found),
      paged: Boolean(page.after),
      complete: related.complete,
      form,
      watch: refused === undefined,
    });
    await sendPage(dash, req, res, { title: 'Session', body, current: '/sessions', status: refused?.status });
  }
}

interface Submitted {
  values: Record<string, string>;
  withExplanation: boolean;
}

/** Refusals the user can act on from the form: bad input, a closed session, a size or a quota. */
const REFUSALS_SHOWN_ON_THE_FORM = new Set([400, 409, 413, 429]);

/** The platform's refusal, under the field it names when it names one (`request.body.petal_width: …`). */
function refusalOf(message: string, fields: InputField[]): { error: string; problems: Record<string, string> } {
  const named = /^request\.body\.([^:\s]+): (.+)$/.exec(message);
  const field = named && fields.find((f) => f.name !== '' && f.name === named[1]);
  if (!field) return { error: message, problems: {} };
  return { error: 'The model’s input schema refused a field; nothing was queued.', problems: { [field.name]: named[2]! } };
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
