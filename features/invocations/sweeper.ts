import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
import { invocationState } from './state.js';

export interface SweeperOptions {
  /** How often a pass runs. */
  intervalMs: number;
}

/**
 * Returns to the queue the runs whose executor stopped renewing its lease
 * (`expire`). Each pass is one conditional UPDATE, so any number of processes
 * may sweep at once: a row moves once, the others find it moved. It is a task
 * of its own: no purge or other upkeep delays lease recovery.
 */
export class Sweeper {
  private readonly task: ScheduledTask;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    options: SweeperOptions,
    scheduler: Scheduler,
    /** Told how many runs a pass returned to the queue, to wake executors for them. */
    private readonly onReturned: (count: number) => void = () => {},
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

  /** One pass over the leases that ran out: how many runs it returned to the queue. */
  async runOnce(): Promise<number> {
    const expired = await invocationState.expireLeases(this.db);
    if (!expired) return 0;
    this.logger.warn({ recovered: expired }, 'returned invocations of vanished workers to the queue');
    this.onReturned(expired);
    return expired;
  }
}
