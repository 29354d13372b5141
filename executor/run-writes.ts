import { isRolledBackConflict, type Db } from '../infra/db/database.js';
import { MicroBatch } from '../infra/db/micro-batch.js';
import { invocationState, type Lease, type RunWrite } from '../features/invocations/state.js';
import type { InvocationRow } from '../features/invocations/store.js';

/**
 * The executor's two writes per run, grouped with those of other runs: while
 * one statement runs, the claims of new deliveries and the completions of
 * finished runs gather, and go together in the next.
 */
export class RunWrites {
  private readonly batch: MicroBatch<RunWrite, InvocationRow | boolean | undefined>;

  constructor(
    private readonly db: Db,
    private readonly leaseMs: number,
  ) {
    // Two statements in flight: a claim rarely waits behind a running batch, and what arrives meanwhile still goes together.
    this.batch = new MicroBatch((writes) => this.writeAll(writes), { maxInFlight: 2 });
  }

  /** The row under a new lease; undefined when finished, or held under another live lease. */
  async claim(id: string): Promise<InvocationRow | undefined> {
    return (await this.batch.add({ claim: id })) as InvocationRow | undefined;
  }

  /** COMPLETED under the lease; false when the lease was lost and the result refused. */
  async complete(lease: Lease, response: string): Promise<boolean> {
    return (await this.batch.add({ complete: { lease, response } })) as boolean;
  }

  private async writeAll(writes: RunWrite[]): Promise<Array<InvocationRow | boolean | undefined>> {
    const claims = writes.flatMap((write) => ('claim' in write ? [write.claim] : []));
    const completions = writes.flatMap((write) => ('complete' in write ? [write.complete] : []));
    // A row both claimed (a redelivery after its lease ran out) and completed in one statement would be
    // updated twice, in an order PostgreSQL does not define: those go one after the other.
    const claimedIds = new Set(claims);
    if (completions.some(({ lease }) => claimedIds.has(lease.id))) {
      const first = await this.statement(claims, []);
      const second = await this.statement([], completions);
      return outputs(writes, first.claimed, second.completed);
    }
    const { claimed, completed } = await this.statement(claims, completions);
    return outputs(writes, claimed, completed);
  }

  private statement(claims: string[], completions: Array<{ lease: Lease; response: string }>) {
    return retryConflicts(() => invocationState.runWrites(this.db, claims, completions, this.leaseMs));
  }
}

function outputs(writes: RunWrite[], claimed: Map<string, InvocationRow>, completed: Set<string>): Array<InvocationRow | boolean | undefined> {
  return writes.map((write) => {
    if ('complete' in write) return completed.has(write.complete.lease.id);
    // A message delivered twice in one batch runs once: only the first caller gets the row.
    const row = claimed.get(write.claim);
    claimed.delete(write.claim);
    return row;
  });
}

/**
 * Two executors' statements that meet on the same rows (a takeover, a message
 * sent twice) may lock them in opposite orders; PostgreSQL then rolls one
 * back, whole, and it runs again.
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
