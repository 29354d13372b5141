import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { WorkQueue } from '../../infra/queue/queue.js';
import { MicroBatch } from '../../infra/db/micro-batch.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
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
  private readonly task: ScheduledTask;
  private forgotten: Promise<void> | undefined;
  // Nobody waits on a mark (it only keeps the relay from sending a row again after
  // `dispatchGraceMs`): marks gather for a while, so light load too makes few statements.
  private readonly marks = new MicroBatch<string, void>((ids) => this.markDispatched(ids), { gatherMs: MARK_GATHER_MS });

  constructor(
    private readonly db: Db,
    private readonly queue: WorkQueue,
    private readonly logger: Logger,
    private readonly options: RelayOptions,
    scheduler: Scheduler,
  ) {
    this.task = scheduler.add({
      name: 'outbox_relay',
      intervalMs: options.pollMs,
      // Queued work of an earlier run is forgotten before the first pass publishes.
      run: async (stopping) => {
        await this.forgotten;
        await this.runOnce(stopping);
      },
      afterStop: () => this.marks.drain(),
    });
  }

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
    this.forgotten ??= this.options.resumeQueuedAtStart ? this.forgetPublications() : Promise.resolve();
    this.task.start();
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
    this.task.wake();
  }

  /** Stops the passes and writes the marks still gathering. */
  async stop(): Promise<void> {
    await this.task.stop();
  }

  /** One full pass; resolves when nothing unpublished is left (or publishing failed), or, between batches, once stopping. */
  async runOnce(stopping?: AbortSignal): Promise<void> {
    while (!stopping?.aborted && (await this.publishBatch()) === this.options.batchSize);
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

