import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import { invocationState } from './state.js';
import { backoffMs } from './relay.js';

export interface SweeperOptions {
  /** How often a pass runs. */
  intervalMs: number;
  /** A QUEUED row published this long ago and still not claimed is published again. */
  republishAfterMs: number;
  /** Other periodic upkeep that rides on the sweeper's passes (expired idempotency keys); each throttles itself. */
  chores?: Array<() => Promise<void>>;
}

/**
 * Returns lost work to the outbox: runs whose executor stopped renewing its
 * lease (`expire`), and publications the broker lost (`unpublish`), for the
 * relay to publish again. Each pass is two conditional UPDATEs, so any number
 * of processes may sweep at once: a row moves once, the others find it moved.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private failures = 0;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly options: SweeperOptions,
    /** Told when a pass returned rows to the outbox, so they go out before the relay's next poll. */
    private readonly onReturned: () => void = () => {},
  ) {}

  /** The first pass runs at once: work a process lost while this one was down goes back now. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass: leases that ran out, then publications gone stale. */
  async runOnce(): Promise<void> {
    const expired = await invocationState.expireLeases(this.db);
    if (expired) this.logger.warn({ recovered: expired }, 'returned invocations of vanished workers to the queue');
    const forgotten = await invocationState.forgetStalePublications(this.db, new Date(Date.now() - this.options.republishAfterMs));
    if (expired || forgotten) this.onReturned();
    for (const chore of this.options.chores ?? []) await chore();
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.running = this.runOnce().then(
      () => {
        this.failures = 0;
      },
      (error: unknown) => {
        this.failures += 1;
        this.logger.warn({ err: error, failures: this.failures }, 'could not sweep the invocations; will retry');
      },
    );
    await this.running;
    this.running = undefined;
    if (!this.stopped) this.schedule(backoffMs(this.options.intervalMs, this.failures));
  }
}
