import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Db, Tx } from '../core/db/database.js';
import { invocationsStore, sessionsStore, type InvocationRow } from '../core/invocations/store.js';
import type { ModelRow } from '../core/models/store.js';
import { MicroBatch } from '../core/db/micro-batch.js';

// The executor's writes to an invocation. Every one is conditional on the row
// still being IN_PROGRESS under this claim (same `attempts`), so a worker whose
// lease was taken over can never overwrite the new owner's result.

/** Whether a row may be claimed: QUEUED, or IN_PROGRESS under a lease that ran out (its worker vanished). */
const claimable = (db: Db) => (q: Knex.QueryBuilder) =>
  q.where({ status: 'QUEUED' }).orWhere((q2) => q2.where({ status: 'IN_PROGRESS' }).where('lease_expires_at', '<', db.fn.now()));

/**
 * The executor's two writes per run, each grouped with the same writes of
 * other runs (MicroBatch): one claim statement for a burst of deliveries, one
 * completion statement for a burst of answers.
 */
export class RunWrites {
  private readonly claims: MicroBatch<string, InvocationRow | undefined>;
  private readonly completions: MicroBatch<{ row: InvocationRow; response: string }, boolean>;

  constructor(
    private readonly db: Db,
    private readonly leaseMs: number,
  ) {
    // Two statements of each kind in flight: what arrives meanwhile goes in the next (group commit).
    this.claims = new MicroBatch((ids) => this.claimAll(ids), { maxInFlight: 2 });
    this.completions = new MicroBatch((items) => this.completeAll(items), { maxInFlight: 2 });
  }

  /** QUEUED (or abandoned) → IN_PROGRESS under a new lease; undefined when finished or held by a live worker. */
  claim(id: string): Promise<InvocationRow | undefined> {
    return this.claims.add(id);
  }

  /** COMPLETED with the response, when nothing is to be queued after it; false when the claim was lost. */
  complete(row: InvocationRow, response: string): Promise<boolean> {
    return this.completions.add({ row, response });
  }

  private async claimAll(ids: string[]): Promise<Array<InvocationRow | undefined>> {
    const rows = (await this.db('invocations')
      .whereIn('id', [...new Set(ids)])
      .where(claimable(this.db))
      .update({ status: 'IN_PROGRESS', started_at: this.db.fn.now(), lease_expires_at: new Date(Date.now() + this.leaseMs), attempts: this.db.raw('attempts + 1') })
      .returning('*')) as InvocationRow[];
    const byId = new Map(rows.map((row) => [row.id, row]));
    // A message delivered twice in one batch runs once: only the first caller gets the row.
    return ids.map((id) => {
      const row = byId.get(id);
      byId.delete(id);
      return row;
    });
  }

  private async completeAll(items: Array<{ row: InvocationRow; response: string }>): Promise<boolean[]> {
    const db = this.db;
    const done = (await db('invocations as i')
      .update({ status: 'COMPLETED', response: db.ref('v.response'), error: null, lease_expires_at: null, completed_at: db.fn.now() })
      .updateFrom(
        db.raw('unnest(?::uuid[], ?::int[], ?::text[]) as v(id, attempts, response)', [
          items.map((item) => item.row.id),
          items.map((item) => item.row.attempts),
          items.map((item) => item.response),
        ]),
      )
      .where('i.id', db.ref('v.id'))
      .where('i.attempts', db.ref('v.attempts'))
      .where('i.status', 'IN_PROGRESS')
      .returning('i.id')) as Array<{ id: string }>;
    const completed = new Set(done.map((row) => row.id));
    return items.map((item) => completed.has(item.row.id));
  }
}

const owned = (db: Db | Tx, row: InvocationRow) => db('invocations').where({ id: row.id, status: 'IN_PROGRESS', attempts: row.attempts });

export async function extendLease(db: Db, row: InvocationRow, leaseMs: number): Promise<void> {
  await owned(db, row).update({ lease_expires_at: new Date(Date.now() + leaseMs) });
}

/** COMPLETED with the response, and the explainer's invocation queued in the same transaction (`with_explanation`). */
export async function completeAndExplain(db: Db, row: InvocationRow, response: string, explainer: ModelRow): Promise<InvocationRow | undefined> {
  const completed = { status: 'COMPLETED', response, error: null, lease_expires_at: null };
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
