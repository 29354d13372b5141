import { goesFirst, turnCost } from '../features/invocations/fair-order.js';

/** Who waits for a model call: its workspace, the workspace's weight, and the run's priority within it. */
export interface SlotClaim {
  key: number;
  weight: number;
  priority: number;
}

/**
 * At most `size` callers inside `run` at once. Slots go to workspaces in
 * the fair order (features/invocations/fair-order.ts) the claim takes them in:
 * each grant moves its workspace's virtual time on by its turn's cost, and a freed slot goes
 * to the waiting workspace whose virtual time is lowest (one that has had
 * nothing for a while starts at the current one), the one waiting longest
 * among equals. Runs claimed ahead then never keep a workspace that has
 * nothing running behind another's, and weights hold however many runs are
 * claimed ahead. Within that workspace, the waiter of the highest priority
 * goes first, then the earliest.
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<SlotClaim & { enter: () => void }> = [];
  /** Virtual time of each workspace's next grant, for those ahead of `now`. */
  private readonly next = new Map<number, number>();
  /** Virtual time of the last grant. */
  private now = 0;

  constructor(size: number) {
    this.free = size;
  }

  async run<T>(claim: SlotClaim, work: () => Promise<T>): Promise<T> {
    if (this.free > 0) {
      this.free -= 1;
      this.grant(claim);
    } else {
      await new Promise<void>((enter) => this.waiting.push({ ...claim, enter }));
    }
    try {
      return await work();
    } finally {
      const next = this.takeNext();
      if (next) {
        this.grant(next);
        next.enter();
      } else {
        this.free += 1;
      }
    }
  }

  private startOf(key: number): number {
    return Math.max(this.next.get(key) ?? this.now, this.now);
  }

  private grant({ key, weight }: SlotClaim): void {
    this.now = this.startOf(key);
    this.next.set(key, this.now + turnCost(weight));
    // Workspaces at or behind the current time start from it anyway.
    for (const [other, at] of this.next) if (at <= this.now) this.next.delete(other);
  }

  /** Of the waiting workspace with the lowest virtual time (the earliest waiting first among equals), its waiter of the highest priority, the earliest among equals. */
  private takeNext(): (SlotClaim & { enter: () => void }) | undefined {
    let chosen = -1;
    let lowest = Infinity;
    for (const [index, { key }] of this.waiting.entries()) {
      const start = this.startOf(key);
      if (start < lowest) [chosen, lowest] = [index, start];
    }
    if (chosen < 0) return undefined;
    const { key } = this.waiting[chosen]!;
    for (const [index, waiter] of this.waiting.entries()) {
      if (waiter.key === key && goesFirst(waiter, this.waiting[chosen]!)) chosen = index;
    }
    return this.waiting.splice(chosen, 1)[0];
  }
}
