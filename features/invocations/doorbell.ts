import type { WorkQueue } from '../../infra/queue/queue.js';

/**
 * Tells executors that work was committed. Runs queued in one task (the
 * appends of one group commit resolve together) go out as one wake-up that
 * counts them: the broker carries a message per committed batch, not per
 * invocation, and nothing is written back once it did. A wake-up that never
 * arrives costs at most an executor's poll (executor/idle-runners.ts).
 */
export class Doorbell {
  private pending = 0;

  constructor(private readonly queue: Pick<WorkQueue, 'ring'>) {}

  /** Call after the commit that queued `count` runs, never before: an executor woken early finds nothing. */
  ring(count = 1): void {
    if (count <= 0) return;
    if (this.pending === 0) setImmediate(() => this.flush());
    this.pending += count;
  }

  private flush(): void {
    const count = this.pending;
    this.pending = 0;
    this.queue.ring({ count, hops: 0 });
  }
}
