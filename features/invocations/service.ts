import crypto from 'node:crypto';
import type { Db, Tx } from '../../infra/db/database.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import { isUuid, type Page } from '../../infra/db/keyset.js';
import type { ModelCatalogService } from '../models/catalog.service.js';
import type { ModelRow } from '../models/store.js';
import type { ModelAliasesService } from '../models/aliases.service.js';
import type { Doorbell } from './doorbell.js';
import { annotateSpan, currentTraceparent } from '../../infra/telemetry/spans.js';
import { invocationAttributes } from './trace-attributes.js';
import type { InvocationFilter, InvocationsStore, NewInvocation, RequestType, SessionRow, SessionsStore } from './store.js';
import { presentInvocation, presentSession } from './present.js';
import { validateFeedback, validateInput } from './validate.js';
import { InvocationBatches } from './batches.js';
import type { ValidationPool } from './validation-pool.js';
import { DEFAULT_PRIORITY, invocationState } from './state.js';
import { FIRST_SNAPSHOT } from './events.js';
import { parseSnapshot } from './snapshot.js';
import type { WebhooksService } from '../webhooks/service.js';
import type { ShadowDispatch } from './shadows.js';

export interface InvokeInput {
  type: 'PREDICT' | 'EXPLAIN';
  order?: number;
  request: { type: RequestType; body: string };
  with_explanation?: boolean;
  /** 0 to 9, higher first within the workspace (DEFAULT_PRIORITY). */
  priority?: number;
  /** Told of the outcome, when a webhook endpoint of the workspace allows it. */
  callback_url?: string;
}

/** Sessions and invocations of the caller (public server). Everything is scoped to the caller's own sessions. */
export class InvocationsService {
  private readonly batches: InvocationBatches;

  constructor(
    private readonly db: Db,
    private readonly stores: { sessions: SessionsStore; invocations: InvocationsStore },
    private readonly models: ModelCatalogService,
    private readonly doorbell: Doorbell,
    private readonly validation: ValidationPool,
    private readonly callbacks: Pick<WebhooksService, 'allowCallback'>,
    private readonly aliases: Pick<ModelAliasesService, 'resolve' | 'shadowsOf'>,
    private readonly shadows: Pick<ShadowDispatch, 'copyAfter'>,
  ) {
    this.batches = new InvocationBatches(db, stores.invocations);
  }

  async listSessions(principal: Principal, code: string, version: string, page: Page, filter: { state?: SessionRow['state'] } = {}) {
    const model = await this.models.forReading(principal, code, version);
    const owner = { workspaceId: model.workspace_id, modelId: model.id, userId: principal.user.id };
    const { rows, total, next } = await this.stores.sessions.pageOfUser(this.db, owner, page, filter);
    return { items: rows.map((row) => presentSession(row, model, principal.workspace!.name)), total, next };
  }

  /** The model version of the caller's newest session in this workspace, to open the sessions page on; undefined before their first. */
  async lastUsedModel(principal: Principal): Promise<{ code: string; version: string } | undefined> {
    const found = await this.stores.sessions.newestModelOfUser(this.db, principal.workspace!.id, principal.user.id);
    return found && { code: found.model_code, version: found.version };
  }

  /** Those of `sessionIds` the caller may open: their own sessions in this workspace. */
  async ownSessions(principal: Principal, sessionIds: readonly string[]): Promise<Set<string>> {
    const uuids = [...new Set(sessionIds)].filter(isUuid);
    return new Set(await this.stores.sessions.idsOfUser(this.db, principal.workspace!.id, principal.user.id, uuids));
  }

  async createSession(principal: Principal, code: string, version: string) {
    const model = await this.models.live(principal, code, version);
    const row = await this.stores.sessions.insert(this.db, { id: crypto.randomUUID(), workspace_id: model.workspace_id, user_id: principal.user.id, model_id: model.id });
    return presentSession(row, model, principal.workspace!.name);
  }

  /**
   * Opens a session on the version the alias resolves to now; the session
   * keeps that version whatever the alias does later. With shadow versions in
   * the alias's policy, a hidden shadow session per version is opened with it,
   * in the same transaction: its predictions are copied there (ShadowDispatch).
   */
  async createSessionOnAlias(principal: Principal, code: string, alias: string) {
    const id = crypto.randomUUID();
    const model = await this.aliases.resolve(principal, code, alias, { sessionId: id, userId: principal.user.id });
    const shadows = (await this.aliases.shadowsOf(principal, code, alias)).filter((modelId) => modelId !== model.id);
    const owner = { workspace_id: model.workspace_id, user_id: principal.user.id };
    const row = await this.db.transaction(async (trx) => {
      const session = await this.stores.sessions.insert(trx, { id, ...owner, model_id: model.id, alias, shadowed: shadows.length > 0 });
      for (const modelId of shadows) await this.stores.sessions.insert(trx, { id: crypto.randomUUID(), ...owner, model_id: modelId, alias, shadow_of: id });
      return session;
    });
    return presentSession(row, model, principal.workspace!.name);
  }

  async setSessionState(principal: Principal, code: string, version: string, sessionId: string, state: SessionRow['state']) {
    const { model, session } = await this.session(principal, code, version, sessionId);
    return presentSession(await this.stores.sessions.setState(this.db, session.id, state), model, principal.workspace!.name);
  }

  async list(principal: Principal, code: string, version: string, sessionId: string, page: Page, filter: InvocationFilter = {}) {
    const { session } = await this.session(principal, code, version, sessionId, 'read');
    const { rows, total, next } = await this.stores.invocations.pageInSession(this.db, session, page, filter);
    return { items: rows.map((row) => presentInvocation(row)), total, next };
  }

  async get(principal: Principal, code: string, version: string, sessionId: string, invocationId: string) {
    const model = await this.models.forReading(principal, code, version);
    // One query for the polling path (batched with concurrent polls): the caller's session and the invocation in it.
    const found = await this.batches.read({ sessionId, modelId: model.id, userId: principal.user.id, id: invocationId });
    if (!found) throw new NotFoundError('Session not found.');
    if (!found.invocation) throw new NotFoundError('Invocation not found.');
    return presentInvocation(found.invocation, { attempts: found.attempts });
  }

  /**
   * Re-runs an invocation of the caller's OPEN session that ended in ERROR or
   * CANCELLED: QUEUED again as a new attempt, its attempts kept, then
   * announced to the executors. A deleted model is a 404, as for invoke; an
   * invocation not failed is a 409 (`invocation_not_failed`).
   */
  async retry(principal: Principal, code: string, version: string, sessionId: string, invocationId: string) {
    const { session } = await this.session(principal, code, version, sessionId);
    if (session.state === 'CLOSED') throw new ConflictError('The session is CLOSED; reopen it to re-run an invocation.', 'session_closed');
    const row = await invocationState.requeue(this.db, session, invocationId);
    if (!row) return this.refuseRetry(session.id, invocationId);
    this.doorbell.ring();
    return presentInvocation(row, { attempts: await this.stores.invocations.attemptsOf(this.db, row.id) });
  }

  /** Why a re-run moved nothing: 404, the invocation not failed (409), or the session CLOSED meanwhile (409). */
  private async refuseRetry(sessionId: string, invocationId: string): Promise<never> {
    const row = await this.stores.invocations.inSession(this.db, sessionId, invocationId);
    if (!row) throw new NotFoundError('Invocation not found.');
    if (row.status === 'ERROR' || row.status === 'CANCELLED') throw new ConflictError('The session is CLOSED; reopen it to re-run an invocation.', 'session_closed');
    throw new ConflictError(`The invocation is ${row.status}: only an ERROR or CANCELLED invocation can be re-run.`, 'invocation_not_failed');
  }

  /**
   * Cancels an invocation of the caller's session that has not finished, and
   * what it queued; a running one's call is aborted by its executor, which
   * loses its lease. 409 once it has finished.
   */
  async cancel(principal: Principal, code: string, version: string, sessionId: string, invocationId: string) {
    const { session } = await this.session(principal, code, version, sessionId, 'read');
    const cancelled = (await invocationState.cancel(this.db, session.id, [invocationId])).find((row) => row.id === invocationId);
    if (cancelled) return presentInvocation(cancelled);
    const row = await this.stores.invocations.inSession(this.db, session.id, invocationId);
    if (!row) throw new NotFoundError('Invocation not found.');
    throw new ConflictError(`The invocation is ${row.status}: only QUEUED or IN_PROGRESS work can be cancelled.`, 'invocation_finished');
  }

  /** Cancels every invocation of the caller's session not yet finished (or only those in `status`); how many. */
  async cancelSession(principal: Principal, code: string, version: string, sessionId: string, status?: 'QUEUED' | 'IN_PROGRESS') {
    const { session } = await this.session(principal, code, version, sessionId, 'read');
    return { cancelled: (await invocationState.cancel(this.db, session.id, undefined, status)).length };
  }

  /**
   * Where the status changes of the caller's session are streamed from: the
   * start of what is kept, or after `lastEventId` (an id the stream sent;
   * anything else is a 400 before the stream starts).
   */
  async events(principal: Principal, code: string, version: string, sessionId: string, lastEventId?: string) {
    const { session } = await this.session(principal, code, version, sessionId, 'read');
    return { sessionId: session.id, from: parseSnapshot(lastEventId ?? FIRST_SNAPSHOT) };
  }

  /** Queues a prediction or explanation: committed QUEUED, then announced to the executors. */
  async invoke(principal: Principal, code: string, version: string, sessionId: string, input: InvokeInput) {
    return (await this.submit(principal, code, version, sessionId, input)).invocation;
  }

  /**
   * `invoke`, with where the invocation's session's events are to be followed
   * from to see every later status of it (`position`): the snapshot its
   * append was written in.
   */
  async submit(principal: Principal, code: string, version: string, sessionId: string, input: InvokeInput) {
    // The session is checked in the append itself (no separate read on this hot path; batched with concurrent appends).
    const model = await this.models.live(principal, code, version);
    this.checkKind(model, input);
    if (input.with_explanation && !(await this.models.explainerOf(model))) {
      throw new InputError(`with_explanation: ${model.model_code} ${model.version} has no explainer.`);
    }
    const callback = input.callback_url === undefined ? undefined : await this.callbacks.allowCallback(model.workspace_id, input.callback_url);
    const outputStorageKey = await validateInput(this.db, this.validation, model, input.request.body);
    const row = await this.batches.append({
      id: crypto.randomUUID(),
      workspace_id: model.workspace_id,
      session_id: sessionId,
      user_id: principal.user.id,
      model_id: model.id,
      type: input.type,
      request_type: input.request.type,
      body: input.request.body,
      model_key: input.type === 'EXPLAIN' ? `${model.model_code}:${model.version}` : '',
      related_to: null,
      with_explanation: input.with_explanation ?? false,
      output_storage_key: outputStorageKey,
      priority: input.priority ?? DEFAULT_PRIORITY,
      ...callback,
      traceparent: currentTraceparent(),
    });
    if (!row) return this.refuseAppend(principal, model, sessionId, 'invoke');
    annotateSpan(invocationAttributes(row, model));
    this.doorbell.ring();
    // Only predictions are copied, after the primary is committed and announced; a file output would be written twice.
    if (row.shadowed && input.type === 'PREDICT' && outputStorageKey === null) this.shadows.copyAfter(row, () => this.doorbell.ring());
    return { invocation: presentInvocation(row, { omitRelatedTo: true }), position: parseSnapshot(row.appended_in) };
  }

  /** Feedback on an earlier invocation: COMPLETED at once, validated against the model's feedback schema. */
  async feedback(principal: Principal, code: string, version: string, sessionId: string, invocationId: string, body: string) {
    const { model } = await this.session(principal, code, version, sessionId);
    await validateFeedback(this.db, this.validation, model, body);
    const row = await this.append(
      principal,
      model,
      sessionId,
      'send feedback',
      {
        type: 'DATA_SUBMISSION',
        request_type: 'FEEDBACK',
        body,
        model_key: '',
        related_to: invocationId,
        with_explanation: false,
        output_storage_key: null,
      },
      async (trx, session) => {
        if (!(await this.stores.invocations.inSession(trx, session.id, invocationId))) throw new NotFoundError('Invocation not found.');
      },
    );
    return presentInvocation(row);
  }

  /**
   * Appends a COMPLETED invocation (feedback) to the caller's OPEN session
   * under the session's row lock, which also serialises the `order` counter.
   */
  private async append(
    principal: Principal,
    model: ModelRow,
    sessionId: string,
    action: string,
    fields: Omit<NewInvocation, 'id' | 'workspace_id' | 'session_id' | 'user_id' | 'model_id' | 'status' | 'response' | 'completed_at'>,
    check?: (trx: Tx, session: SessionRow) => Promise<void>,
  ) {
    return this.db.transaction(async (trx) => {
      const session = await this.stores.sessions.reserveOrderOfUser(trx, sessionId, model.id, principal.user.id);
      if (!session) throw new NotFoundError('Session not found.');
      await check?.(trx, session);
      if (session.state === 'CLOSED') throw new ConflictError(`The session is CLOSED; reopen it to ${action}.`, 'session_closed');
      return invocationState.appendCompleted(trx, {
        ...fields,
        id: crypto.randomUUID(),
        order: session.next_order - 1,
        workspace_id: model.workspace_id,
        session_id: session.id,
        user_id: principal.user.id,
        model_id: model.id,
      });
    });
  }

  /** Why an append found no OPEN session of the caller: 404, or 409 when it is theirs but CLOSED. */
  private async refuseAppend(principal: Principal, model: ModelRow, sessionId: string, action: string): Promise<never> {
    const session = await this.stores.sessions.ofUser(this.db, sessionId, model.id, principal.user.id);
    if (!session) throw new NotFoundError('Session not found.');
    throw new ConflictError(`The session is CLOSED; reopen it to ${action}.`, 'session_closed');
  }

  private checkKind(model: ModelRow, input: InvokeInput): void {
    const isExplainer = model.explains_id !== null;
    if (input.type === 'EXPLAIN' && !isExplainer) {
      throw new InputError(`type: EXPLAIN must be sent to an explainer's path; ${model.model_code} ${model.version} is not an explainer.`);
    }
    if (input.with_explanation && isExplainer) throw new InputError('with_explanation: send it to the main model, not to an explainer.');
  }

  /**
   * The caller's own session of that model version, or 404 (never revealing
   * other users' sessions); to read, the model may have been deleted since.
   */
  private async session(principal: Principal, code: string, version: string, sessionId: string, access: 'read' | 'write' = 'write') {
    const model = access === 'read' ? await this.models.forReading(principal, code, version) : await this.models.live(principal, code, version);
    const session = await this.stores.sessions.ofUser(this.db, sessionId, model.id, principal.user.id);
    if (!session) throw new NotFoundError('Session not found.');
    return { model, session };
  }
}
