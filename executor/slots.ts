/**
 * At most `size` callers inside `run` at once. A freed slot goes to the
 * waiter whose key (its workspace) has the fewest calls running, the earliest
 * first among equals: runs claimed ahead then never keep a workspace that has
 * nothing running behind another's. Within that key, the waiter of the
 * highest priority goes first, as the claim orders a workspace's work, then
 * the earliest.
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<{ key: number; priority: number; enter: () => void }> = [];
  private readonly running = new Map<number, number>();

  constructor(size: number) {
    this.free = size;
  }

  async run<T>(key: number, priority: number, work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((enter) => this.waiting.push({ key, priority, enter }));
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = this.running.get(key)! - 1;
      if (left) this.running.set(key, left);
      else this.running.delete(key);
      const next = this.takeNext();
      if (next) next.enter();
      else this.free += 1;
    }
  }

  /** Of the key with the fewest calls running (the earliest waiting first among equals), its waiter of the highest priority, the earliest among equals. */
  private takeNext(): { key: number; enter: () => void } | undefined {
    let chosen = -1;
    let fewest = Infinity;
    for (const [index, { key }] of this.waiting.entries()) {
      const running = this.running.get(key) ?? 0;
      if (running < fewest) [chosen, fewest] = [index, running];
      if (fewest === 0) break;
    }
    if (chosen < 0) return undefined;
    const { key } = this.waiting[chosen]!;
    for (const [index, waiter] of this.waiting.entries()) {
      if (waiter.key === key && waiter.priority > this.waiting[chosen]!.priority) chosen = index;
    }
    return this.waiting.splice(chosen, 1)[0];
  }
}
