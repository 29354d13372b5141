import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { WorkQueue } from '../../infra/queue/queue.js';
import { MicroBatch } from '../../infra/db/micro-batch.js';
import { invocationState } from './state.js';

/** How long marks gather before their statement; far below any sensible `dispatchGraceMs`. */
const MARK_GATHER_MS = 50;

export interface RelayOptions {
  batchSize: number;
  pollMs: number;
  /** Unpublished rows younger than this are left to their own dispatch (see `dispatch`). */
  dispatchGraceMs: number;
  /** At start, publish again every QUEUED row: the in-process queue that held them died with the last run. */
  resumeQueuedAtStart?: boolean;
}

/**
 * The transactional outbox relay. An invocation is committed QUEUED first;
 * the relay publishes unpublished rows and marks them only after the broker
 * confirmed, so a broker outage delays work but loses none. It only
 * publishes: what returns lost work to the outbox is the sweeper (sweeper.ts).
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failures = 0;
  private forgotten: Promise<void> | undefined;
  // Nobody waits on a mark (it only keeps the relay from sending a row again after
  // `dispatchGraceMs`): marks gather for a while, so light load too makes few statements.
  private readonly marks = new MicroBatch<string, void>((ids) => this.markDispatched(ids), { gatherMs: MARK_GATHER_MS });

  constructor(
    private readonly db: Db,
    private readonly queue: WorkQueue,
    private readonly logger: Logger,
    private readonly options: RelayOptions,
  ) {}

  /**
   * Publishes a just-committed invocation now, outside any transaction, and
   * marks it published once the broker confirmed: no relay batch and no row
   * lock stand between the commit and the executor. Should the publish fail,
   * or the process die first, the row stays unmarked and a relay pass
   * publishes it after `dispatchGraceMs`; a second copy of a message is
   * harmless, since executors claim conditionally.
   */
  dispatch(id: string): void {
    this.queue.publish([id]).then(
      () => this.mark(id),
      (error: unknown) => {
        this.logger.debug({ err: error, invocationId: id }, 'dispatch failed; the relay will publish it');
        this.kick();
      },
    );
  }

  private mark(id: string): void {
    this.marks.add(id).catch((error: unknown) => {
      this.logger.warn({ err: error, invocationId: id }, 'could not mark a dispatched invocation; a relay pass will publish it again');
    });
  }

  start(): void {
    this.stopped = false;
    this.forgotten ??= this.options.resumeQueuedAtStart ? this.forgetPublications() : Promise.resolve();
    void this.forgotten.then(() => this.schedule(0));
  }

  private async forgetPublications(): Promise<void> {
    try {
      const forgotten = await invocationState.forgetPublications(this.db);
      if (forgotten) this.logger.info({ forgotten }, 'queued invocations of an earlier run will be published again');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not look for queued invocations of an earlier run; they go out after the republish delay');
    }
  }

  /** Publish now (after a commit that queued work) instead of waiting for the next poll. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel();
    await this.running;
    await this.marks.drain();
  }

  /** One full pass; resolves when nothing unpublished is left (or publishing failed). */
  async runOnce(): Promise<void> {
    while (!this.stopped && (await this.publishBatch()) === this.options.batchSize);
  }

  private schedule(delayMs: number): void {
    this.cancel();
    // A kick runs on the next turn of the event loop (setTimeout would wait at least 1 ms).
    if (delayMs === 0) this.immediate = setImmediate(() => void this.tick());
    else {
      this.timer = setTimeout(() => void this.tick(), delayMs);
      this.timer.unref();
    }
  }

  private cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.running) return;
    this.running = this.runOnce().then(
      () => {
        this.failures = 0;
      },
      (error: unknown) => {
        this.failures += 1;
        this.logger.warn({ err: error, failures: this.failures }, 'outbox relay could not publish; will retry');
      },
    );
    await this.running;
    this.running = undefined;
    if (this.stopped) return;
    const backoff = backoffMs(this.options.pollMs, this.failures);
    if (this.again && !this.failures) {
      this.again = false;
      this.schedule(0);
    } else this.schedule(backoff);
  }

  /**
   * Marks a batch and publishes it inside one transaction: a failed publish
   * (or a process that dies) rolls the marks back.
   */
  private async publishBatch(): Promise<number> {
    return this.db.transaction(async (trx) => {
      const ids = await invocationState.takeUnpublished(trx, this.options.dispatchGraceMs, this.options.batchSize);
      if (ids.length) await this.queue.publish(ids);
      return ids.length;
    });
  }

  private async markDispatched(ids: string[]): Promise<void[]> {
    await invocationState.markPublished(this.db, ids);
    return ids.map(() => undefined);
  }
}

/** The wait before a background pass: the interval, doubled per failure in a row up to 10 s, so an absent database is not hammered. */
export const backoffMs = (intervalMs: number, failures: number) => (failures ? Math.min(intervalMs * 2 ** failures, 10_000) : intervalMs);
