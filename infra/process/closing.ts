interface Step {
  label: string;
  since: number;
}

/**
 * The steps of a process's shutdown still running, by name: when the grace
 * period runs out, the last log line says what held the process, not only
 * that something did.
 */
export class ClosingSteps {
  private readonly open = new Set<Step>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Runs `close` as the step `name` (numbered when one of that name is still open); it counts as open until it settles. */
  async run(name: string, close: () => Promise<unknown> | unknown): Promise<void> {
    const namesakes = [...this.open].filter(({ label }) => label === name || label.startsWith(`${name} (`)).length;
    const step = { label: namesakes ? `${name} (${namesakes + 1})` : name, since: this.now() };
    this.open.add(step);
    try {
      await close();
    } finally {
      this.open.delete(step);
    }
  }

  /** The steps not yet settled, each with how long it has run, oldest first. */
  pending(): Array<{ step: string; ms: number }> {
    const at = this.now();
    return [...this.open].map(({ label, since }) => ({ step: label, ms: at - since }));
  }
}
