export interface WorkQueueOptions {
  /** First retry delay of a failing key; doubles per consecutive failure. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * The controller work queue: a key is queued at most once however many
 * changes arrive, is never handed to two workers at once (a change during
 * processing queues it again afterwards), and failing keys come back with
 * exponential backoff.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;

  constructor(private readonly options: WorkQueueOptions) {}

  get length(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
    } else {
      this.queue.push(key);
    }
  }

  /** Adds the key after `ms`; an earlier pending add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms).unref();
    this.timers.set(key, { at, timer });
  }

  /** Adds the key after its backoff, which grows with each call until `forget`. */
  addRateLimited(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const delay = this.backoff(failures);
    this.addAfter(key, delay);
    return delay;
  }

  backoff(failures: number): number {
    return Math.min(this.options.baseDelayMs * 2 ** Math.min(failures, 30), this.options.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key to process, or undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks the key processed; if it changed meanwhile it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (!this.dirty.has(key)) return;
    this.dirty.delete(key);
    this.add(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters) waiter(undefined);
    this.waiters = [];
  }
}
