import crypto from 'node:crypto';
import { isRolledBackConflict, type Db, type Tx } from '../core/db/database.js';
import { invocationColumns, invocationsStore, sessionsStore, type InvocationRow } from '../core/invocations/store.js';
import type { ModelRow } from '../core/models/store.js';
import { MicroBatch } from '../core/db/micro-batch.js';
import { prepared } from '../core/db/prepared.js';

// The executor's writes to an invocation. Every one is conditional on the row
// still being IN_PROGRESS under this claim (same `attempts`), so a worker whose
// lease was taken over can never overwrite the new owner's result.

type RunWrite = { claim: string } | { complete: { row: InvocationRow; response: string } };

/** What a claim found: the row now held, nothing to run (finished, or held under a live lease), or no row at all. */
export type Claim = InvocationRow | undefined | 'absent';

/**
 * One statement for a burst of the executor's two writes per run: claims
 * (QUEUED, or IN_PROGRESS under a lease that ran out, → IN_PROGRESS under a new
 * lease) and completions (IN_PROGRESS under this claim → COMPLETED). The
 * claimed rows come back whole, the completed ones as `completed_id`, and the
 * claimed ids without a row (not committed yet, or never) as `absent_id`. The
 * lists go in as JSON (see `prepared`); `i.id = any(array(…))` keeps the
 * generic plan on an index, where a join with a list it cannot size (it
 * guesses 100 rows) could scan the table (`not exists` did: a hash anti-join
 * over all of invocations).
 */
export const WRITE_BATCH_SQL = `
with completions as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, attempts integer, response text)),
claims as (select jsonb_array_elements_text(?::jsonb)::uuid as id),
claimed as (
  update invocations as i
     set status = 'IN_PROGRESS', started_at = now(), lease_expires_at = ?::timestamptz, attempts = i.attempts + 1
   where i.id = any(array(select id from claims))
     and (i.status = 'QUEUED' or (i.status = 'IN_PROGRESS' and i.lease_expires_at < now()))
  returning ${invocationColumns('i')}
), completed as (
  update invocations as i
     set status = 'COMPLETED', response = v.response, error = null, lease_expires_at = null, completed_at = now()
    from completions as v
   where i.id = any(array(select id from completions)) and i.id = v.id and i.attempts = v.attempts and i.status = 'IN_PROGRESS'
  returning i.id
)
select claimed.*, null::uuid as completed_id, null::uuid as absent_id from claimed
union all
select ${invocationColumns('(null::invocations)')}, completed.id, null from completed
union all
select ${invocationColumns('(null::invocations)')}, null, c.id from claims as c
 where c.id <> all(array(select i.id from invocations as i where i.id = any(array(select id from claims))))`;

/**
 * The executor's two writes per run, grouped with those of other runs
 * (MicroBatch): while one statement runs, the claims of new deliveries and the
 * completions of finished runs gather, and go together in the next.
 */
export class RunWrites {
  private readonly batch: MicroBatch<RunWrite, Claim | boolean>;

  constructor(
    private readonly db: Db,
    private readonly leaseMs: number,
  ) {
    // Two statements in flight: a claim rarely waits behind a running batch (latency), and what arrives
    // meanwhile still goes together (one wake-up of the database for many runs).
    this.batch = new MicroBatch((writes) => this.writeAll(writes), { maxInFlight: 2 });
  }

  /** QUEUED (or abandoned) → IN_PROGRESS under a new lease; undefined when finished or held by a live worker; 'absent' without a row. */
  async claim(id: string): Promise<Claim> {
    return (await this.batch.add({ claim: id })) as Claim;
  }

  /** COMPLETED with the response, when nothing is to be queued after it; false when the claim was lost. */
  async complete(row: InvocationRow, response: string): Promise<boolean> {
    return (await this.batch.add({ complete: { row, response } })) as boolean;
  }

  private async writeAll(writes: RunWrite[]): Promise<Array<Claim | boolean>> {
    const claims = writes.flatMap((write) => ('claim' in write ? [write.claim] : []));
    const completions = writes.flatMap((write) => ('complete' in write ? [write.complete] : []));
    // A row both claimed (a redelivery, its lease run out) and completed here would be updated twice by one
    // statement, which PostgreSQL does not order: those go one after the other.
    const claimed = new Set(claims);
    if (completions.some(({ row }) => claimed.has(row.id))) {
      const first = await this.statement(claims, []);
      const second = await this.statement([], completions);
      return this.outputs(writes, { ...first, completed: second.completed });
    }
    return this.outputs(writes, await this.statement(claims, completions));
  }

  private async statement(claims: string[], completions: Array<{ row: InvocationRow; response: string }>) {
    const result = await retryConflicts(() => this.run(claims, completions));
    const claimed = new Map<string, InvocationRow>();
    const completed = new Set<string>();
    const absent = new Set<string>();
    for (const { completed_id: completedId, absent_id: absentId, ...row } of result.rows) {
      if (completedId) completed.add(completedId);
      else if (absentId) absent.add(absentId);
      else claimed.set(row.id, row as InvocationRow);
    }
    return { claimed, completed, absent };
  }

  private async run(claims: string[], completions: Array<{ row: InvocationRow; response: string }>) {
    return (await prepared(this.db, 'invocations.run-writes', WRITE_BATCH_SQL, [
      JSON.stringify(completions.map(({ row, response }) => ({ id: row.id, attempts: row.attempts, response }))),
      JSON.stringify([...new Set(claims)]),
      new Date(Date.now() + this.leaseMs),
    ])) as { rows: Array<InvocationRow & { completed_id: string | null; absent_id: string | null }> };
  }

  private outputs(writes: RunWrite[], { claimed, completed, absent }: { claimed: Map<string, InvocationRow>; completed: Set<string>; absent: Set<string> }): Array<Claim | boolean> {
    return writes.map((write) => {
      if ('complete' in write) return completed.has(write.complete.row.id);
      if (absent.has(write.claim)) return 'absent';
      // A message delivered twice in one batch runs once: only the first caller gets the row.
      const row = claimed.get(write.claim);
      claimed.delete(write.claim);
      return row;
    });
  }
}

/**
 * The statement's plan, not its text, decides the order in which it locks its
 * rows, and each connection keeps its own plan: two executors' statements that
 * meet on the same rows (a takeover, a message sent twice) may lock them in
 * opposite orders. PostgreSQL then rolls one back, whole, so it runs again.
 */
async function retryConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isRolledBackConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
    }
  }
}

const CONFLICT_ATTEMPTS = 3;

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
