/**
 * The steps of a process's shutdown still running, by name: when the grace
 * period runs out, the last log line says what held the process, not only
 * that something did.
 */
export class ClosingSteps {
  private readonly open = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Runs `close` as the step `name`; it counts as open until it settles. */
  async run(name: string, close: () => Promise<unknown> | unknown): Promise<void> {
    const key = this.open.has(name) ? `${name} (${this.open.size + 1})` : name;
    this.open.set(key, this.now());
    try {
      await close();
    } finally {
      this.open.delete(key);
    }
  }

  /** The steps not yet settled, each with how long it has run, oldest first. */
  pending(): Array<{ step: string; ms: number }> {
    const at = this.now();
    return [...this.open].map(([step, since]) => ({ step, ms: at - since }));
  }
}
