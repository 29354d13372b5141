/**
 * Where runners that found queued work they could not take yet (a quota,
 * a backoff) wait: until a run of this executor ends, which may free a slot,
 * or the next tick. All waiters wake together, so their claims go as one.
 */
export class Wakeup {
  private waiters: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly tickMs: number) {}

  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.timer ??= setTimeout(() => this.notify(), this.tickMs);
    });
  }

  notify(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
