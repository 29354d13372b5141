import crypto from 'node:crypto';
import type { Db, Tx } from '../core/db/database.js';
import { invocationsStore, sessionsStore, type InvocationRow } from '../core/invocations/store.js';
import type { ModelRow } from '../core/models/store.js';

// The executor's writes to an invocation. Every one is conditional on the row
// still being IN_PROGRESS under this claim (same `attempts`), so a worker whose
// lease was taken over can never overwrite the new owner's result.

export async function claim(db: Db, id: string, leaseMs: number): Promise<InvocationRow | undefined> {
  const [row] = await db('invocations')
    .where({ id })
    .where((q) => q.where({ status: 'QUEUED' }).orWhere((q2) => q2.where({ status: 'IN_PROGRESS' }).where('lease_expires_at', '<', db.fn.now())))
    .update({
      status: 'IN_PROGRESS',
      started_at: db.fn.now(),
      lease_expires_at: new Date(Date.now() + leaseMs),
      attempts: db.raw('attempts + 1'),
    })
    .returning('*');
  return row as InvocationRow | undefined;
}

const owned = (db: Db | Tx, row: InvocationRow) => db('invocations').where({ id: row.id, status: 'IN_PROGRESS', attempts: row.attempts });

export async function extendLease(db: Db, row: InvocationRow, leaseMs: number): Promise<void> {
  await owned(db, row).update({ lease_expires_at: new Date(Date.now() + leaseMs) });
}

/** COMPLETED with the response; with `with_explanation`, queues the explainer's invocation in the same transaction. */
export async function complete(db: Db, row: InvocationRow, response: string, explainer: ModelRow | undefined): Promise<InvocationRow | undefined> {
  const completed = { status: 'COMPLETED', response, error: null, lease_expires_at: null };
  // Nothing to queue after it: one statement, no transaction round trips.
  if (!row.with_explanation || !explainer) {
    await owned(db, row).update({ ...completed, completed_at: db.fn.now() });
    return undefined;
  }
  return db.transaction(async (trx) => {
    const updated = await owned(trx, row).update({ ...completed, completed_at: trx.fn.now() });
    if (!updated) return undefined;
    await sessionsStore.lockById(trx, row.session_id);
    const order = await sessionsStore.takeOrder(trx, row.session_id);
    return invocationsStore.insert(trx, {
      id: crypto.randomUUID(),
      order,
      workspace_id: row.workspace_id,
      session_id: row.session_id,
      user_id: row.user_id,
      model_id: explainer.id,
      type: 'EXPLAIN',
      request_type: row.request_type,
      body: row.body,
      status: 'QUEUED',
      model_key: `${explainer.model_code}:${explainer.version}`,
      related_to: row.id,
      with_explanation: true, // the chain goes on, explainer by explainer
      output_storage_key: null,
    });
  });
}

export async function fail(db: Db, row: InvocationRow, reason: string): Promise<void> {
  await owned(db, row).update({ status: 'ERROR', error: reason.slice(0, 2000), response: '', completed_at: db.fn.now(), lease_expires_at: null });
}

/** Back to QUEUED for a redelivery by the broker (marked published so the relay does not send a second copy). */
export async function release(db: Db, row: InvocationRow, reason: string): Promise<void> {
  await owned(db, row).update({ status: 'QUEUED', error: reason.slice(0, 2000), published_at: db.fn.now(), lease_expires_at: null });
}
