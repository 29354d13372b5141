const WINDOW_MS = 60_000;
/** Keys beyond this many share one window, so a flood from ever new addresses cannot grow the map without bound. */
const MAX_KEYS = 10_000;
const OVERFLOW = '\u0000overflow';

interface Window {
  start: number;
  kept: number;
  dropped: number;
}

/**
 * At most `perMinute` records per key (source address and action) in each
 * minute of this process; the rest are dropped and counted, and the count
 * goes with the next record kept for the key (`suppressed`).
 */
export class FloodLimit {
  private readonly windows = new Map<string, Window>();
  /** Every record dropped since the process started. */
  droppedTotal = 0;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Undefined: drop this record; else how many were dropped for its key since the last one kept. */
  admit(key: string): number | undefined {
    const now = this.now();
    const window = this.windowOf(this.windows.has(key) || this.roomFor(now) ? key : OVERFLOW, now);
    if (window.kept >= this.perMinute) {
      window.dropped++;
      this.droppedTotal++;
      return undefined;
    }
    window.kept++;
    const suppressed = window.dropped;
    window.dropped = 0;
    return suppressed;
  }

  private windowOf(key: string, now: number): Window {
    const current = this.windows.get(key);
    if (current && now - current.start < WINDOW_MS) return current;
    const fresh = { start: now, kept: 0, dropped: current?.dropped ?? 0 };
    this.windows.set(key, fresh);
    return fresh;
  }

  /** Whether a new key fits, once the windows that ended are forgotten. */
  private roomFor(now: number): boolean {
    if (this.windows.size < MAX_KEYS) return true;
    for (const [key, window] of this.windows) if (now - window.start >= WINDOW_MS) this.windows.delete(key);
    return this.windows.size < MAX_KEYS;
  }
}
