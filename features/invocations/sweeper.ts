import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
import { invocationState } from './state.js';

export interface SweeperOptions {
  /** How often a pass runs. */
  intervalMs: number;
  /** A QUEUED row published this long ago and still not claimed is published again. */
  republishAfterMs: number;
}

/**
 * Returns lost work to the outbox: runs whose executor stopped renewing its
 * lease (`expire`), and publications the broker lost (`unpublish`), for the
 * relay to publish again. Each pass is two conditional UPDATEs, so any number
 * of processes may sweep at once: a row moves once, the others find it moved.
 * It is a task of its own: no purge or other upkeep delays lease recovery.
 */
export class Sweeper {
  private readonly task: ScheduledTask;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly options: SweeperOptions,
    scheduler: Scheduler,
    /** Told when a pass returned rows to the outbox, so they go out before the relay's next poll. */
    private readonly onReturned: () => void = () => {},
  ) {
    this.task = scheduler.add({ name: 'invocation_sweeper', intervalMs: options.intervalMs, run: () => this.runOnce() });
  }

  /** The first pass runs at once: work a process lost while this one was down goes back now. */
  start(): void {
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** One pass: leases that ran out, then publications gone stale. */
  async runOnce(): Promise<void> {
    const expired = await invocationState.expireLeases(this.db);
    if (expired) this.logger.warn({ recovered: expired }, 'returned invocations of vanished workers to the queue');
    const forgotten = await invocationState.forgetStalePublications(this.db, new Date(Date.now() - this.options.republishAfterMs));
    if (expired || forgotten) this.onReturned();
  }
}
