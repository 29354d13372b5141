import { performance } from 'node:perf_hooks';

/** A deadline whose clock can be stopped: the time it is paused does not count. */
export class PausableDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private left: number;
  private since = 0;

  /** Starts counting `ms` now. */
  constructor(ms: number) {
    this.left = ms;
    this.resume();
  }

  /** Aborted once the deadline has passed. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  pause(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= performance.now() - this.since;
  }

  resume(): void {
    if (this.timer || this.signal.aborted) return;
    this.since = performance.now();
    this.timer = setTimeout(() => this.controller.abort(), Math.max(0, this.left));
  }

  /** Stops the clock for good. */
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
