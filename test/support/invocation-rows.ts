import crypto from 'node:crypto';
import type { Db } from '../../infra/db/database.js';

/** What a test gives of an invocation it writes directly; the rest comes from its session. */
export interface InvocationRow {
  type?: string;
  status: string;
  body?: string;
  response?: string;
  related_to?: string | null;
  shadow_of?: string | null;
  created_at: Date;
  started_at?: Date | null;
  completed_at?: Date | null;
}

/**
 * Writes an invocation into `session` at its next order, as the executor
 * would have left it (no queue involved): how the comparison's and the
 * guards' tests set down outcomes and times they choose. Its id.
 */
export async function writeInvocation(db: Db, session: string, row: InvocationRow): Promise<string> {
  const owner = await db('sessions').where({ id: session }).first();
  const { next_order: order } = (await db('sessions').where({ id: session }).increment('next_order', 1).returning('next_order'))[0] as { next_order: number };
  const id = crypto.randomUUID();
  await db('invocations').insert({
    id,
    workspace_id: owner.workspace_id,
    session_id: session,
    user_id: owner.user_id,
    model_id: owner.model_id,
    order: order - 1,
    type: row.type ?? 'PREDICT',
    request_type: row.type === 'DATA_SUBMISSION' ? 'FEEDBACK' : 'FEATURES',
    body: row.body ?? '{}',
    status: row.status,
    related_to: row.related_to ?? null,
    response: row.response ?? '',
    shadow_of: row.shadow_of ?? null,
    created_at: row.created_at,
    started_at: row.started_at ?? null,
    completed_at: row.completed_at ?? null,
  });
  return id;
}
