import { isRolledBackConflict, type Db } from '../infra/db/database.js';
import { MicroBatch } from '../infra/db/micro-batch.js';
import { invocationState, type ClaimedRow, type Lease } from '../features/invocations/state.js';
import { EXECUTOR_IDENTITY } from './identity.js';

/** What one claim got: a row under a new lease, or none, and whether queued work is left it could not take yet. */
export type Claim = { row: ClaimedRow } | { row?: undefined; waiting: boolean };

/**
 * The executor's two writes per run, grouped with those of other runs: the
 * claims of runners that ask while a claim runs go together in the
 * next one (one fair claim of as many rows), and so do completions.
 */
export class RunWrites {
  private readonly claims: MicroBatch<void, Claim>;
  private readonly completions: MicroBatch<{ lease: Lease; response: string }, boolean>;

  constructor(
    private readonly db: Db,
    private readonly leaseMs: number,
    /** Who claims, in the attempts recorded. */
    private readonly executor: string = EXECUTOR_IDENTITY,
  ) {
    // One claim at a time per executor: those that gather meanwhile go as one, larger, fair claim.
    this.claims = new MicroBatch((wanted) => this.claimAll(wanted.length), { maxInFlight: 1 });
    this.completions = new MicroBatch((done) => this.completeAll(done), { maxInFlight: 2 });
  }

  /** The next invocation in fair order, under a new lease. */
  claim(): Promise<Claim> {
    return this.claims.add(undefined);
  }

  /** COMPLETED under the lease; false when the lease was lost and the result refused. */
  complete(lease: Lease, response: string): Promise<boolean> {
    return this.completions.add({ lease, response });
  }

  private async claimAll(count: number): Promise<Claim[]> {
    const { rows, waiting } = await retryConflicts(() => invocationState.claimNext(this.db, count, this.leaseMs, this.executor));
    return Array.from({ length: count }, (_, index) => (rows[index] ? { row: rows[index] } : { waiting }));
  }

  private async completeAll(done: Array<{ lease: Lease; response: string }>): Promise<boolean[]> {
    const completed = await retryConflicts(() => invocationState.complete(this.db, done));
    return done.map(({ lease }) => completed.has(lease.id));
  }
}

/**
 * A claim and another writer (a mark, a cancel) that meet on the same rows may
 * lock them in opposite orders; PostgreSQL then rolls one back, whole, and it
 * runs again.
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
