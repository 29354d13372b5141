/**
 * At most `size` callers inside `run` at once. A freed slot goes to the
 * waiter whose key (its workspace) has the fewest calls running, the earliest
 * first among equals: runs claimed ahead then never keep a workspace that has
 * nothing running behind another's, and one key's calls keep their order.
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<{ key: number; enter: () => void }> = [];
  private readonly running = new Map<number, number>();

  constructor(size: number) {
    this.free = size;
  }

  async run<T>(key: number, work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((enter) => this.waiting.push({ key, enter }));
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

  /** The waiter of the key with the fewest calls running; the first of them in arrival order. */
  private takeNext(): { key: number; enter: () => void } | undefined {
    let chosen = -1;
    let fewest = Infinity;
    for (const [index, { key }] of this.waiting.entries()) {
      const running = this.running.get(key) ?? 0;
      if (running < fewest) [chosen, fewest] = [index, running];
      if (fewest === 0) break;
    }
    return chosen < 0 ? undefined : this.waiting.splice(chosen, 1)[0];
  }
}
