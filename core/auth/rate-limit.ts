import { RateLimitedError } from '../errors/errors.js';

/**
 * Fixed-window attempt counter. In-process: with several auth replicas each
 * enforces its own window (documented in docs/security.md).
 */
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one attempt for `key`; throws RateLimitedError (429) past the limit. */
  hit(key: string): void {
    const now = this.now();
    if (this.windows.size > 50_000) this.prune(now);
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count > this.limit) throw new RateLimitedError(Math.max(1, Math.ceil((window.resetAt - now) / 1000)));
  }

  private prune(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
