import type { Runner } from '../../infra/db/database.js';
import { prepared } from '../../infra/db/prepared.js';
import { keysetPage, type Page } from '../../infra/db/keyset.js';

export type InvocationStatus = 'QUEUED' | 'IN_PROGRESS' | 'COMPLETED' | 'ERROR' | 'CANCELLED';
export type InvocationType = 'PREDICT' | 'EXPLAIN' | 'DATA_SUBMISSION';
export type RequestType = 'FEATURES' | 'PROMPT' | 'FEEDBACK' | 'OTHER';

export interface InvocationRow {
  id: string;
  workspace_id: number;
  session_id: string;
  user_id: number;
  model_id: number;
  order: number;
  type: InvocationType;
  request_type: RequestType;
  body: string;
  status: InvocationStatus;
  response: string;
  error: string | null;
  model_key: string;
  related_to: string | null;
  with_explanation: boolean;
  output_storage_key: string | null;
  /** 0 to 9, higher first within its workspace (DEFAULT_PRIORITY unless asked). */
  priority: number;
  attempts: number;
  lease_expires_at: Date | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  /** A retry's backoff: not claimed before. */
  available_at: Date | null;
  /** The attempts made before its last re-run (`requeue`): its retry budget counts from there. */
  rerun_attempts: number;
  /** The webhook endpoint that allowed its `callback_url`, whose secret signs the callback. */
  callback_endpoint_id: number | null;
  callback_url: string | null;
  /** The W3C traceparent its run continues (null when tracing was off). */
  traceparent: string | null;
  /** A shadow invocation: the primary prediction it copies (migration 0043); null for every other. */
  shadow_of: string | null;
}

/** How an attempt ended; null while it runs. */
export type AttemptOutcome = 'COMPLETED' | 'ERROR' | 'RETRY' | 'CANCELLED' | 'LOST';

/** One attempt of an invocation: its lease number, the executor that held it, and how it ended. */
export interface AttemptRow {
  attempt: number;
  executor: string;
  started_at: Date;
  ended_at: Date | null;
  outcome: AttemptOutcome | null;
  error: string | null;
}

const INVOCATION_COLUMN_SET: Record<keyof InvocationRow, true> = {
  id: true, workspace_id: true, session_id: true, user_id: true, model_id: true, order: true, type: true, request_type: true, body: true,
  status: true, response: true, error: true, model_key: true, related_to: true, with_explanation: true, output_storage_key: true,
  priority: true, attempts: true, lease_expires_at: true, created_at: true, started_at: true, completed_at: true,
  available_at: true, rerun_attempts: true, callback_endpoint_id: true, callback_url: true, traceparent: true, shadow_of: true,
};

/**
 * The columns of an InvocationRow, for the hot prepared statements (db/prepared.ts). They name
 * them instead of `*`: a column added by a later migration must not change the result type of a
 * statement a running server has prepared (PostgreSQL would refuse to run it until reconnection).
 */
export function invocationColumns(alias: string): string {
  return Object.keys(INVOCATION_COLUMN_SET).map((column) => `${alias}."${column}"`).join(', ');
}

export type NewInvocation = Pick<
  InvocationRow,
  'id' | 'workspace_id' | 'session_id' | 'user_id' | 'model_id' | 'type' | 'request_type' | 'body' | 'status' | 'model_key' | 'related_to' | 'with_explanation' | 'output_storage_key'
> & { response?: string; completed_at?: Date | null; priority?: number; traceparent?: string | null };

/** How much of a session's history a `need_context` model receives (DIDYMA_CONTEXT_MAX_INVOCATIONS, DIDYMA_CONTEXT_MAX_BYTES). */
export interface ContextWindow {
  maxInvocations: number;
  maxBytes: number;
}

export interface InvocationFilter {
  status?: InvocationStatus;
  type?: InvocationType;
  /** Only those related to one of these invocations: their explanations and the feedback on them. */
  relatedTo?: string[];
}

export interface SessionRow {
  id: string;
  workspace_id: number;
  user_id: number;
  model_id: number;
  /** The alias it was opened through (null: opened on a version); `model_id` is the version it resolved to, for its life. */
  alias: string | null;
  state: 'OPEN' | 'CLOSED';
  next_order: number;
  /** Its DATA_SUBMISSION invocations, kept by a trigger (migration 0009). */
  feedback_count: number;
  /** A hidden shadow session: the caller's session whose predictions it copies; null for a caller's own session. */
  shadow_of: string | null;
  /** A caller's session that has shadow sessions: each append to it is copied to them. */
  shadowed: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A closed session of the caller, with the model version it belongs to (what a dataset export selects). */
export interface SelectedSession {
  id: string;
  model_code: string;
  version: string;
}

/** Sessions counted by live workspace, model version, user and state: a gauge of the private server's scrape. */
export interface SessionCount {
  workspace: string;
  model_code: string;
  model_version: string;
  user_id: number;
  state: string;
  n: number;
}

/** Invocations waiting or running for one model version of a live workspace, for the scrape. */
export interface WorkloadCount {
  workspace: string;
  model_code: string;
  model_version: string;
  status: 'QUEUED' | 'IN_PROGRESS';
  n: number;
}

/**
 * Each status counted from its own partial index (invocations_fair,
 * invocations_running), which holds only the rows waiting or running: a
 * scrape costs the same however many finished invocations the table keeps.
 */
export const WORKLOAD_SQL = `
select w.name as workspace, m.model_code, m.version as model_version, c.status, c.n
  from (select workspace_id, model_id, 'QUEUED' as status, count(*)::integer as n from invocations where status = 'QUEUED' group by workspace_id, model_id
        union all
        select workspace_id, model_id, 'IN_PROGRESS' as status, count(*)::integer as n from invocations where status = 'IN_PROGRESS' group by workspace_id, model_id) c
  join workspaces w on w.id = c.workspace_id
  join models m on m.id = c.model_id
 where w.deleted_at is null`;

/**
 * The live model of the user's newest session in the workspace: one probe of
 * sessions_list (workspace, model, user, newest first) per live model of the
 * workspace, the newest of them kept.
 */
const NEWEST_SESSION_MODEL_SQL = `
select m.model_code, m.version
  from models m
  cross join lateral (
    select s.created_at, s.id from sessions s
     where s.workspace_id = m.workspace_id and s.model_id = m.id and s.user_id = ? and s.shadow_of is null
     order by s.created_at desc, s.id desc
     limit 1) newest
 where m.workspace_id = ? and m.deleted_at is null
 order by newest.created_at desc, newest.id desc
 limit 1`;

/** A user's own sessions: shadow sessions are the platform's, never shown or written through a caller's path. */
const ownSessions = (db: Runner) => db<SessionRow>('sessions').whereNull('shadow_of');

/** A hidden session copying a caller's session on a shadow version: where its shadow invocations are queued. */
export type ShadowSession = Pick<SessionRow, 'id' | 'workspace_id' | 'user_id' | 'model_id'>;

export const sessionsStore = {
  insert: async (db: Runner, row: Pick<SessionRow, 'id' | 'workspace_id' | 'user_id' | 'model_id'> & Partial<Pick<SessionRow, 'alias' | 'shadow_of' | 'shadowed'>>) =>
    (await db<SessionRow>('sessions').insert(row as never).returning('*'))[0] as SessionRow,
  /** The OPEN shadow sessions of a caller's session on live versions, by model id: a version deleted since gets no more copies. */
  shadowsOf: (db: Runner, sessionId: string): Promise<ShadowSession[]> =>
    db('sessions as s')
      .join('models as m', 'm.id', 's.model_id')
      .where({ 's.shadow_of': sessionId, 's.state': 'OPEN' })
      .whereNull('m.deleted_at')
      .orderBy('s.model_id')
      .select('s.id', 's.workspace_id', 's.user_id', 's.model_id'),
  /** Only the caller's session of that model: anything else is "not found". */
  ofUser: (db: Runner, id: string, modelId: number, userId: number) => ownSessions(db).where({ id, model_id: modelId, user_id: userId }).first(),
  lockOfUser: (db: Runner, id: string, modelId: number, userId: number) =>
    ownSessions(db).where({ id, model_id: modelId, user_id: userId }).forUpdate().first(),
  lockById: (db: Runner, id: string) => db<SessionRow>('sessions').where({ id }).forUpdate().first(),
  /**
   * The caller's session, row-locked, with its next `order` reserved, in one
   * statement: the new invocation's order is `next_order - 1`. Inside a
   * transaction, so a later refusal (closed session, …) gives the order back.
   */
  reserveOrderOfUser: async (db: Runner, id: string, modelId: number, userId: number) =>
    (await ownSessions(db).where({ id, model_id: modelId, user_id: userId }).increment('next_order', 1).returning('*'))[0] as SessionRow | undefined,
  /** A page of the user's sessions of one model of the workspace, newest first. */
  pageOfUser: (db: Runner, owner: { workspaceId: number; modelId: number; userId: number }, page: Page, filter: { state?: SessionRow['state'] } = {}) =>
    keysetPage<SessionRow>(
      ownSessions(db).where({ workspace_id: owner.workspaceId, model_id: owner.modelId, user_id: owner.userId, ...(filter.state && { state: filter.state }) }),
      page,
      { table: 'sessions', idType: 'uuid' },
    ),
  setState: async (db: Runner, id: string, state: SessionRow['state']) =>
    (await db<SessionRow>('sessions').where({ id }).update({ state, updated_at: new Date() } as never).returning('*'))[0] as SessionRow,
  /** Reserves the next `order` of the session (the caller holds the session's row lock). */
  /** The user's closed sessions in the workspace, oldest first, optionally of one model code or version. */
  closedOfUser: (db: Runner, workspaceId: number, userId: number, model: { model_code?: string; model_version?: string }): Promise<SelectedSession[]> => {
    const query = db('sessions as s')
      .join('models as m', 'm.id', 's.model_id')
      .where({ 's.workspace_id': workspaceId, 's.user_id': userId, 's.state': 'CLOSED' })
      .whereNull('s.shadow_of')
      .orderBy([{ column: 's.created_at' }, { column: 's.id' }])
      .select<SelectedSession[]>('s.id', 'm.model_code', 'm.version');
    if (model.model_code) query.where('m.model_code', model.model_code);
    if (model.model_version) query.where('m.version', model.model_version);
    return query;
  },
  /** The model of the user's newest session in the workspace, among its live models; undefined when they have none. */
  newestModelOfUser: async (db: Runner, workspaceId: number, userId: number): Promise<Pick<SelectedSession, 'model_code' | 'version'> | undefined> =>
    ((await db.raw(NEWEST_SESSION_MODEL_SQL, [userId, workspaceId])) as { rows: Array<Pick<SelectedSession, 'model_code' | 'version'>> }).rows[0],
  /** Those of `ids` that are the user's sessions in the workspace. */
  idsOfUser: async (db: Runner, workspaceId: number, userId: number, ids: readonly string[]): Promise<string[]> =>
    ids.length ? (await ownSessions(db).where({ workspace_id: workspaceId, user_id: userId }).whereIn('id', ids).pluck('id')) as string[] : [],
  /** Sessions of live workspaces, counted for the scrape; shadow sessions, which stay OPEN, are the platform's and not counted. */
  sessionCounts: async (db: Runner): Promise<SessionCount[]> =>
    (await db('sessions as s')
      .join('workspaces as w', 'w.id', 's.workspace_id')
      .whereNull('w.deleted_at')
      .whereNull('s.shadow_of')
      .join('models as m', 'm.id', 's.model_id')
      .groupBy('w.name', 'm.model_code', 'm.version', 's.user_id', 's.state')
      .select('w.name as workspace', 'm.model_code', 'm.version as model_version', 's.user_id', 's.state')
      .count('* as n')) as unknown as SessionCount[],
  takeOrder: async (db: Runner, id: string) =>
    ((await db('sessions').where({ id }).increment('next_order', 1).returning('next_order'))[0] as { next_order: number }).next_order - 1,
};

/** Typed by its object: the functions above are the interface services receive. */
export type SessionsStore = typeof sessionsStore;

/**
 * The count of a session's list the session row already holds, so a long
 * session is not counted row by row on every page: every invocation takes
 * the next order (dense, state.ts), and feedback is counted by a trigger.
 * Undefined when other filters apply: those are counted.
 */
function keptCount(session: Pick<SessionRow, 'next_order' | 'feedback_count'>, page: Page, filter: InvocationFilter): number | undefined {
  if (filter.status || filter.relatedTo || page.createdAfter || page.createdBefore) return undefined;
  if (!filter.type) return session.next_order;
  return filter.type === 'DATA_SUBMISSION' ? session.feedback_count : undefined;
}

/** A session's invocations (the session's workspace too, so no filter reaches past its tenant) as the filter selects them. */
function inSessionFiltered(db: Runner, session: Pick<SessionRow, 'id' | 'workspace_id'>, filter: InvocationFilter) {
  const query = db('invocations').where({ workspace_id: session.workspace_id, session_id: session.id, ...(filter.status && { status: filter.status }), ...(filter.type && { type: filter.type }) });
  return filter.relatedTo ? query.whereIn('related_to', filter.relatedTo) : query;
}

/** An invocation queued by a POST: the columns an append writes (the status is QUEUED, the rest take their defaults). */
export type QueuedInvocation = Omit<NewInvocation, 'response' | 'completed_at' | 'status' | 'priority'> &
  Pick<InvocationRow, 'priority'> &
  Partial<Pick<InvocationRow, 'callback_endpoint_id' | 'callback_url' | 'shadow_of'>>;

/** An invocation's attempts in order as one JSON array, through the primary key of invocation_attempts. */
const ATTEMPTS_OF = (alias: string) => `
(select coalesce(jsonb_agg(jsonb_build_object('attempt', a.attempt, 'executor', a.executor, 'started_at', a.started_at, 'ended_at', a.ended_at, 'outcome', a.outcome, 'error', a.error) order by a.attempt), '[]'::jsonb)
   from invocation_attempts a where a.invocation_id = ${alias}.id)`;

/** The caller's session and the invocation in it with its attempts, for many (session, model, user, invocation) keys at once. */
const READ_BATCH_SQL = `
select k.ord as batch_ord, s.id as session_of_user, ${invocationColumns('i')}, case when i.id is null then null else ${ATTEMPTS_OF('i')} end as attempt_list
from jsonb_to_recordset(?::jsonb) as k(ord integer, session_id uuid, model_id integer, user_id integer, id uuid)
join sessions s on s.id = k.session_id and s.model_id = k.model_id and s.user_id = k.user_id and s.shadow_of is null
left join invocations i on i.session_id = s.id and i.id = k.id`;

/** An attempt as jsonb_build_object gives it: its times as text. */
type JsonAttempt = Omit<AttemptRow, 'started_at' | 'ended_at'> & { started_at: string; ended_at: string | null };

/** The caller's session held the key: the invocation in it (undefined: none by that id), with its attempts. */
export interface FoundInvocation {
  invocation: InvocationRow | undefined;
  attempts?: AttemptRow[];
}

/** The attempts of a read as rows: their times as dates, like every other row's. */
const attemptsOf = (list: JsonAttempt[] | null): AttemptRow[] =>
  (list ?? []).map((a) => ({ ...a, started_at: new Date(a.started_at), ended_at: a.ended_at === null ? null : new Date(a.ended_at) }));

export interface InvocationKey {
  sessionId: string;
  modelId: number;
  userId: number;
  id: string;
}

/** Reads of invocations; every write goes through state.ts. */
export const invocationsStore = {
  /** QUEUED and IN_PROGRESS invocations per model version of each live workspace (WORKLOAD_SQL); one with none has no row. */
  workloadCounts: async (db: Runner): Promise<WorkloadCount[]> => ((await db.raw(WORKLOAD_SQL)) as { rows: WorkloadCount[] }).rows,
  /**
   * The caller's session of that model and the invocation in it, for many keys in one query
   * (the polling path, batched across requests): one output per key, in order, undefined when
   * the session is not the caller's.
   */
  inSessionsOfUsers: async (db: Runner, keys: InvocationKey[]): Promise<Array<FoundInvocation | undefined>> => {
    const input = keys.map((key, ord) => ({ ord, session_id: key.sessionId, model_id: key.modelId, user_id: key.userId, id: key.id }));
    type Found = InvocationRow & { batch_ord: number; session_of_user: string; attempt_list: JsonAttempt[] | null };
    const found = await prepared<Found>(db, 'invocations.read', READ_BATCH_SQL, [JSON.stringify(input)]);
    const byOrd = new Map(
      found.map(({ batch_ord: ord, session_of_user: _session, attempt_list: list, ...invocation }) => [
        ord,
        invocation.id ? { invocation: invocation as InvocationRow, attempts: attemptsOf(list) } : { invocation: undefined },
      ]),
    );
    return keys.map((_key, ord) => byOrd.get(ord));
  },
  /** An invocation's attempts, oldest first. */
  attemptsOf: async (db: Runner, id: string): Promise<AttemptRow[]> =>
    (await db('invocation_attempts').where({ invocation_id: id }).orderBy('attempt').select('attempt', 'executor', 'started_at', 'ended_at', 'outcome', 'error')) as AttemptRow[],
  inSession: (db: Runner, sessionId: string, id: string) => db<InvocationRow>('invocations').where({ session_id: sessionId, id }).first(),
  byId: (db: Runner, id: string) => db<InvocationRow>('invocations').where({ id }).first(),
  /**
   * The shadow invocations of a caller's session, each with the model version
   * it ran on: those of each shadow session in order, shadow sessions by model id.
   */
  shadowsOfSession: (db: Runner, workspaceId: number, sessionId: string) =>
    db('invocations as i')
      .join('sessions as s', 's.id', 'i.session_id')
      .join('models as m', 'm.id', 'i.model_id')
      .where({ 's.shadow_of': sessionId, 's.workspace_id': workspaceId, 'i.workspace_id': workspaceId })
      .orderBy([{ column: 's.model_id' }, { column: 'i.order' }])
      .select<Array<InvocationRow & { model_code: string; version: string }>>('i.*', 'm.model_code', 'm.version'),
  /** Every invocation of a session of the workspace, in order. */
  allInSession: (db: Runner, workspaceId: number, sessionId: string) =>
    db<InvocationRow>('invocations').where({ workspace_id: workspaceId, session_id: sessionId }).orderBy('order'),
  /** A page of a session's invocations, newest first. */
  pageInSession: (db: Runner, session: Pick<SessionRow, 'id' | 'workspace_id' | 'next_order' | 'feedback_count'>, page: Page, filter: InvocationFilter = {}) =>
    keysetPage<InvocationRow>(
      inSessionFiltered(db, session, filter),
      page,
      { table: 'invocations', idType: 'uuid' },
      keptCount(session, page, filter),
    ),
  /**
   * The session context of an invocation, oldest first: the latest earlier
   * predictions and explanations, at most `maxInvocations` of them and no more
   * than `maxBytes` of requests and responses, so the read and what the model
   * is sent stay the same size however long the session grows.
   */
  contextBefore: async (db: Runner, of: Pick<InvocationRow, 'workspace_id' | 'session_id' | 'order'>, window: ContextWindow) => {
    const latest = db('invocations')
      .where({ workspace_id: of.workspace_id, session_id: of.session_id })
      .where('order', '<', of.order)
      .whereNot('type', 'DATA_SUBMISSION')
      .orderBy('order', 'desc')
      .limit(window.maxInvocations)
      .select('order', 'body', 'response', db.raw('sum(octet_length(body) + octet_length(response)) over (order by "order" desc rows between unbounded preceding and current row) as bytes_so_far'));
    return (await db.from(latest.as('latest')).where('bytes_so_far', '<=', window.maxBytes).orderBy('order').select('body', 'response')) as Array<Pick<InvocationRow, 'body' | 'response'>>;
  },
};

/** Typed by its object: the functions above are the interface services receive. */
export type InvocationsStore = typeof invocationsStore;
