/** Why an idle runner woke: a wake-up, the poll, or the executor stopping. */
export type WakeReason = 'ring' | 'poll' | 'stop';

/**
 * Where an executor's runners wait when their last claim found nothing to
 * do: until a wake-up counts work for them, or the poll, which wakes one of
 * them every `pollMs` so that work whose wake-up was lost is claimed anyway.
 */
export class IdleRunners {
  private readonly waiters: Array<(reason: WakeReason) => void> = [];
  private poll: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly pollMs: number) {}

  get count(): number {
    return this.waiters.length;
  }

  wait(): Promise<WakeReason> {
    if (this.stopped) return Promise.resolve('stop');
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.armPoll();
    });
  }

  /** Wakes up to `count` idle runners, the longest idle first; how many it woke. */
  wake(count: number, reason: WakeReason = 'ring'): number {
    const woken = this.waiters.splice(0, count);
    for (const resolve of woken) resolve(reason);
    if (!this.waiters.length) {
      clearTimeout(this.poll);
      this.poll = undefined;
    }
    return woken.length;
  }

  /** Wakes every runner for good: each one's next wait returns at once. */
  stop(): void {
    this.stopped = true;
    this.wake(Infinity, 'stop');
  }

  private armPoll(): void {
    this.poll ??= setTimeout(() => {
      this.poll = undefined;
      this.wake(1, 'poll');
      if (this.waiters.length) this.armPoll();
    }, this.pollMs);
  }
}
