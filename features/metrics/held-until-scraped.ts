/**
 * Holds the updates of series just made at zero until a scrape has read them
 * so. Prometheus's rate() and increase() see only changes between two
 * samples: a series whose first sample is already 1 hides its first run from
 * every rate and latency quantile, and a model's first runs are the ones a
 * new user looks for.
 */
export class HeldUntilScraped {
  private readonly held = new Map<string, { seen: boolean; updates: Array<() => void> }>();

  /** @param maxHeld updates one series may hold before they are applied anyway (nothing scrapes this process). */
  constructor(private readonly maxHeld = 1000) {}

  /** Holds the updates of `key`, a series just made at zero, until a scrape has read it. */
  hold(key: string): void {
    if (!this.held.has(key)) this.held.set(key, { seen: false, updates: [] });
  }

  /** Runs an update now, or after the next scrape when its series is held. */
  apply(key: string, update: () => void): void {
    const entry = this.held.get(key);
    if (!entry) return update();
    entry.updates.push(update);
    if (entry.updates.length >= this.maxHeld) this.release(key);
  }

  /** A scrape begins: series read at zero by an earlier one get their updates before this one reads them. */
  scraped(): void {
    for (const [key, entry] of this.held) {
      if (entry.seen) this.release(key);
      else entry.seen = true;
    }
  }

  private release(key: string): void {
    const entry = this.held.get(key);
    this.held.delete(key);
    for (const update of entry?.updates ?? []) update();
  }
}
