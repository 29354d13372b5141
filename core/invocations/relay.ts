import type { Logger } from 'pino';
import type { Db, Runner } from '../db/database.js';
import type { WorkQueue } from '../queue/queue.js';
import { MicroBatch } from '../db/micro-batch.js';
import { JSON_UUIDS, prepared } from '../db/prepared.js';

/** Marks dispatched rows published, skipping those an executor holds locked or has claimed already (see markDispatched). */
const MARK_DISPATCHED_SQL = `
update invocations set published_at = now()
 where id in (select id from invocations where id = any(${JSON_UUIDS}) and status = 'QUEUED' and published_at is null for update skip locked)`;

/**
 * The rows the relay looks for on every pass, in every process that runs one.
 * Each is found through a partial index (migrations 0003 and 0007), so a pass
 * costs the same with a hundred invocations or a hundred million; a scan of
 * the table every second would not (relay.test.ts checks the plans).
 */
export const relayScans = {
  /** Committed QUEUED but never confirmed by the broker, oldest first: their own dispatch failed or was lost. */
  unpublished: (db: Runner, graceMs: number) =>
    db('invocations')
      .where({ status: 'QUEUED' })
      .whereNull('published_at')
      .whereRaw(`created_at < now() - ? * interval '1 millisecond'`, [graceMs])
      .orderBy('created_at'),
  /** Published long ago and still QUEUED: the broker lost the message, so it goes out again. */
  stalePublications: (db: Runner, cutoff: Date) => db('invocations').where({ status: 'QUEUED' }).where('published_at', '<', cutoff),
  /** IN_PROGRESS under a lease that ran out: the worker vanished. */
  expiredLeases: (db: Runner) => db('invocations').where({ status: 'IN_PROGRESS' }).where('lease_expires_at', '<', db.fn.now()),
};

/** How long marks gather before their statement; far below any sensible `dispatchGraceMs`. */
const MARK_GATHER_MS = 50;

/**
 * An invocation published before its append committed (`dispatchBeforeCommit`)
 * may reach an executor before its row exists. The executor looks for the row
 * again for `rowWaitMs`; the publisher marks the row published only when its
 * append came back within `markWithinMs` of being sent. Then the commit came
 * before the executor's last look (the message left after the statement and
 * reached the executor later still), so no marked row has a message an
 * executor gave up on. A row left unmarked is published again by a relay pass
 * after `dispatchGraceMs`, which a claim makes harmless.
 */
export const BEFORE_COMMIT = { markWithinMs: 250, rowWaitMs: 500 } as const;

/** A dispatch that went out before its append's commit; told when the append committed. */
export interface EarlyDispatch {
  /** The append committed its row (not called when it failed or was refused). */
  committed(): void;
}

export interface RelayOptions {
  batchSize: number;
  pollMs: number;
  /** A QUEUED row published this long ago and still not claimed is published again. */
  republishAfterMs: number;
  /** Unpublished rows younger than this are left to their own dispatch (see `dispatch`). */
  dispatchGraceMs: number;
}

/**
 * The transactional outbox relay. An invocation is committed QUEUED first;
 * the relay publishes unpublished rows and marks them only after the broker
 * confirmed, so a broker outage delays work but loses none. It also returns
 * to the queue work whose executor lease expired (a worker died).
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failures = 0;
  private lastMaintenance = 0;
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

  /**
   * Publishes an invocation whose append statement has just been sent, without
   * waiting for its commit: the executor's wait for the row then overlaps the
   * database's answer to the API server (one hop off the path of every queued
   * invocation). Only for an append expected to succeed: a refused one leaves
   * a message without a row, which an executor drops after `rowWaitMs`.
   */
  dispatchBeforeCommit(id: string): EarlyDispatch {
    const sentAt = performance.now();
    const confirmed = this.queue.publish([id]).then(
      () => true,
      (error: unknown) => {
        this.logger.debug({ err: error, invocationId: id }, 'dispatch failed; the relay will publish it');
        return false;
      },
    );
    return {
      committed: () => {
        const inTime = performance.now() - sentAt <= BEFORE_COMMIT.markWithinMs;
        void confirmed.then((ok) => {
          if (!ok) this.kick();
          else if (inTime) this.mark(id);
        });
      },
    };
  }

  private mark(id: string): void {
    this.marks.add(id).catch((error: unknown) => {
      this.logger.warn({ err: error, invocationId: id }, 'could not mark a dispatched invocation; a relay pass will publish it again');
    });
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
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
    await this.maintain();
    while (!this.stopped && (await this.publishBatch()) === this.options.batchSize);
  }

  /**
   * Lease recovery and stale resets scan the table: at most once per poll
   * interval, not on every kick (a kick after each commit only publishes).
   */
  private async maintain(): Promise<void> {
    if (Date.now() - this.lastMaintenance < this.options.pollMs) return;
    await this.recoverExpiredLeases();
    await this.resetStalePublications();
    this.lastMaintenance = Date.now();
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
    const backoff = this.failures ? Math.min(this.options.pollMs * 2 ** this.failures, 10_000) : this.options.pollMs;
    if (this.again && !this.failures) {
      this.again = false;
      this.schedule(0);
    } else this.schedule(backoff);
  }

  /**
   * Marks a batch and publishes it inside one transaction: a failed publish
   * (or a process that dies) rolls the marks back. The mark is a single
   * UPDATE … RETURNING over rows no other relay holds.
   */
  private async publishBatch(): Promise<number> {
    return this.db.transaction(async (trx) => {
      const unpublished = relayScans.unpublished(trx, this.options.dispatchGraceMs).limit(this.options.batchSize).forUpdate().skipLocked().select('id');
      const rows = (await trx('invocations').whereIn('id', unpublished).update({ published_at: trx.fn.now() }).returning('id')) as Array<{ id: string }>;
      if (!rows.length) return 0;
      const ids = rows.map((r) => r.id);
      await this.queue.publish(ids);
      return ids.length;
    });
  }

  /**
   * Only rows still QUEUED are marked: the relay only ever sends QUEUED rows,
   * and a row that went back to QUEUED was marked by the way it went back
   * (`release` marks it, lease recovery clears the mark on purpose). Most runs
   * end before their mark (it gathers for 50 ms): marking them anyway was one
   * more update per invocation, of indexed columns, so never a cheap in-page
   * (HOT) one. Rows an executor holds locked (claiming or completing them) are
   * skipped, not waited for: a mark must never stall, or deadlock with, the
   * run path.
   */
  private async markDispatched(ids: string[]): Promise<void[]> {
    await prepared(this.db, 'invocations.mark-dispatched', MARK_DISPATCHED_SQL, [JSON.stringify(ids)]);
    return ids.map(() => undefined);
  }

  private async recoverExpiredLeases(): Promise<void> {
    const recovered = await relayScans.expiredLeases(this.db).update({ status: 'QUEUED', published_at: null, lease_expires_at: null });
    if (recovered) this.logger.warn({ recovered }, 'returned invocations of vanished workers to the queue');
  }

  private async resetStalePublications(): Promise<void> {
    const cutoff = new Date(Date.now() - this.options.republishAfterMs);
    await relayScans.stalePublications(this.db, cutoff).update({ published_at: null });
  }
}
