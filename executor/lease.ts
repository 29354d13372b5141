import type { Logger } from 'pino';
import type { Db } from '../infra/db/database.js';
import { invocationState, type Lease } from '../features/invocations/state.js';

/**
 * Renews a claimed run's lease while it runs, a third of the lease apart, so a
 * live worker keeps its run and a dead one hands it on within one lease. A
 * renewal the database refuses means the lease is lost; one that fails is
 * logged and tried again at the next beat.
 */
export class LeaseKeeper {
  private readonly timer: NodeJS.Timeout;
  private renewing = false;

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    private readonly leaseMs: number,
    private readonly logger: Logger,
    /** Told once when the lease is lost: the run's call is no longer wanted. */
    private readonly onLost: () => void = () => {},
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(leaseMs / 3, 100));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      if (await invocationState.heartbeat(this.db, this.lease, this.leaseMs)) return;
      // The run's own writes will be refused; nothing is left to renew.
      this.stop();
      this.logger.warn({ lease: this.lease.attempts }, 'lease lost: the invocation was cancelled or another worker holds it now');
      this.onLost();
    } catch (error) {
      this.logger.warn({ err: error, lease: this.lease.attempts }, 'could not renew the lease; trying again');
    } finally {
      this.renewing = false;
    }
  }
}

/** A write of a run refused because its lease was lost: the run's result is not taken; the run is another executor's now. */
export class LeaseLostError extends Error {
  constructor(readonly lease: Lease) {
    super(`Invocation ${lease.id}: lease ${lease.attempts} was lost; its result was refused.`);
    this.name = 'LeaseLostError';
  }
}
