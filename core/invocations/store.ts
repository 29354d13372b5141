import type { Runner } from '../db/database.js';

export type InvocationStatus = 'QUEUED' | 'IN_PROGRESS' | 'COMPLETED' | 'ERROR';
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
  attempts: number;
  published_at: Date | null;
  lease_expires_at: Date | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export type NewInvocation = Pick<
  InvocationRow,
  'id' | 'workspace_id' | 'session_id' | 'user_id' | 'model_id' | 'type' | 'request_type' | 'body' | 'status' | 'model_key' | 'related_to' | 'with_explanation' | 'output_storage_key'
> & { response?: string; completed_at?: Date | null };

export interface SessionRow {
  id: string;
  workspace_id: number;
  user_id: number;
  model_id: number;
  state: 'OPEN' | 'CLOSED';
  next_order: number;
  created_at: Date;
  updated_at: Date;
}

export const sessionsStore = {
  insert: async (db: Runner, row: Pick<SessionRow, 'id' | 'workspace_id' | 'user_id' | 'model_id'>) =>
    (await db<SessionRow>('sessions').insert(row as never).returning('*'))[0] as SessionRow,
  /** Only the caller's session of that model: anything else is "not found". */
  ofUser: (db: Runner, id: string, modelId: number, userId: number) => db<SessionRow>('sessions').where({ id, model_id: modelId, user_id: userId }).first(),
  lockOfUser: (db: Runner, id: string, modelId: number, userId: number) =>
    db<SessionRow>('sessions').where({ id, model_id: modelId, user_id: userId }).forUpdate().first(),
  lockById: (db: Runner, id: string) => db<SessionRow>('sessions').where({ id }).forUpdate().first(),
  /**
   * The caller's session, row-locked, with its next `order` reserved, in one
   * statement: the new invocation's order is `next_order - 1`. Inside a
   * transaction, so a later refusal (closed session, …) gives the order back.
   */
  reserveOrderOfUser: async (db: Runner, id: string, modelId: number, userId: number) =>
    (await db<SessionRow>('sessions').where({ id, model_id: modelId, user_id: userId }).increment('next_order', 1).returning('*'))[0] as SessionRow | undefined,
  listOfUser: (db: Runner, modelId: number, userId: number, page: { limit: number; offset: number }) =>
    db<SessionRow>('sessions').where({ model_id: modelId, user_id: userId }).orderBy('created_at').limit(page.limit).offset(page.offset),
  countOfUser: async (db: Runner, modelId: number, userId: number) =>
    Number(((await db('sessions').where({ model_id: modelId, user_id: userId }).count('* as n').first()) as { n: number }).n),
  setState: async (db: Runner, id: string, state: SessionRow['state']) =>
    (await db<SessionRow>('sessions').where({ id }).update({ state, updated_at: new Date() } as never).returning('*'))[0] as SessionRow,
  /** Reserves the next `order` of the session (the caller holds the session's row lock). */
  takeOrder: async (db: Runner, id: string) =>
    ((await db('sessions').where({ id }).increment('next_order', 1).returning('next_order'))[0] as { next_order: number }).next_order - 1,
};

/** SQL types of the insertable columns: INSERT … SELECT needs its parameters typed. */
const INSERT_TYPES: Record<keyof NewInvocation, string> = {
  id: 'uuid',
  workspace_id: 'integer',
  session_id: 'uuid',
  user_id: 'integer',
  model_id: 'integer',
  type: 'text',
  request_type: 'text',
  body: 'text',
  status: 'text',
  model_key: 'text',
  related_to: 'uuid',
  with_explanation: 'boolean',
  output_storage_key: 'text',
  response: 'text',
  completed_at: 'timestamptz',
};

export const invocationsStore = {
  /**
   * Appends an invocation to the caller's OPEN session in one statement: the
   * session's `next_order` is taken under its row lock and the row inserted,
   * atomically, without a transaction's extra round trips (the hot POST path).
   * Undefined when the session is not the caller's, or not OPEN.
   */
  appendToOpenSession: async (db: Runner, owner: { modelId: number; userId: number }, row: NewInvocation) => {
    const { session_id: sessionId, ...fields } = row;
    const entries = Object.entries(fields).filter(([, value]) => value !== undefined) as Array<[keyof NewInvocation, unknown]>;
    const session = db('sessions')
      .where({ id: sessionId, model_id: owner.modelId, user_id: owner.userId, state: 'OPEN' })
      .increment('next_order', 1)
      .returning(['id', 'next_order']);
    const values = db('s').select(
      ...entries.map(([column, value]) => db.raw(`cast(? as ${INSERT_TYPES[column]})`, [value as never])),
      db.raw('s.next_order - 1'),
      's.id',
    );
    const columns = [...entries.map(([column]) => column), 'order', 'session_id'];
    const rows = (await db
      .with('s', session)
      .insert(values)
      .into(db.raw(`?? (${columns.map(() => '??').join(', ')})`, ['invocations', ...columns]))
      .returning('*')) as InvocationRow[];
    return rows[0];
  },
  insert: async (db: Runner, row: NewInvocation & { order: number }) =>
    (await db<InvocationRow>('invocations').insert(row as never).returning('*'))[0] as InvocationRow,
  inSession: (db: Runner, sessionId: string, id: string) => db<InvocationRow>('invocations').where({ session_id: sessionId, id }).first(),
  /** The caller's session of that model and the invocation in it, in one query: undefined when the session is not theirs. */
  inSessionOfUser: async (db: Runner, sessionId: string, modelId: number, userId: number, id: string) => {
    const row = (await db('sessions as s')
      .leftJoin('invocations as i', (join) => join.on('i.session_id', 's.id').andOn('i.id', db.raw('?', [id])))
      .where({ 's.id': sessionId, 's.model_id': modelId, 's.user_id': userId })
      .first('s.id as session_of_user', 'i.*')) as (InvocationRow & { session_of_user: string }) | undefined;
    if (!row) return undefined;
    const { session_of_user: _session, ...invocation } = row;
    return { invocation: invocation.id ? (invocation as InvocationRow) : undefined };
  },
  byId: (db: Runner, id: string) => db<InvocationRow>('invocations').where({ id }).first(),
  listInSession: (db: Runner, sessionId: string, page: { limit: number; offset: number }) =>
    db<InvocationRow>('invocations').where({ session_id: sessionId }).orderBy('order').limit(page.limit).offset(page.offset),
  countInSession: async (db: Runner, sessionId: string) =>
    Number(((await db('invocations').where({ session_id: sessionId }).count('* as n').first()) as { n: number }).n),
  /** Earlier invocations of the session, for models that need the session context. */
  contextBefore: (db: Runner, sessionId: string, order: number) =>
    db<InvocationRow>('invocations').where({ session_id: sessionId }).where('order', '<', order).orderBy('order').select('body', 'response', 'type', 'status'),
};
