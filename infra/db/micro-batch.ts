import { outsideAnyTrace } from '../telemetry/spans.js';

/**
 * Groups calls into one database statement. Calls made in the same turn of
 * the event loop form a batch; with `maxInFlight`, calls arriving while that
 * many batches are running wait for one to finish and go together in the
 * next (group commit). Under light load every batch holds one call and adds
 * no delay (it runs on setImmediate); under heavy load a batch saves a round
 * trip, and the wake-up of a database backend, per extra call.
 */
export class MicroBatch<I, O> {
  private pending: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private scheduled: NodeJS.Immediate | NodeJS.Timeout | undefined;
  /** The batches running now. */
  private readonly running = new Set<Promise<void>>();
  private readonly maxItems: number;
  private readonly maxInFlight: number;
  private readonly gatherMs: number;

  /**
   * `run` gets the items of one batch and returns one output per item, in
   * order; an output made by `rejectItem` fails that item's caller alone.
   * `gatherMs`: for writes nobody waits on, a batch gathers for that long
   * before it runs, so under light load too it holds many calls.
   */
  constructor(
    private readonly run: (items: I[]) => Promise<Array<O | RejectedItem>>,
    options: { maxItems?: number; maxInFlight?: number; gatherMs?: number } = {},
  ) {
    this.maxItems = options.maxItems ?? 100;
    this.maxInFlight = options.maxInFlight ?? Infinity;
    this.gatherMs = options.gatherMs ?? 0;
  }

  /** Runs what is pending now, without waiting for the gathering, and resolves when no batch runs. */
  async drain(): Promise<void> {
    this.unschedule();
    while (this.pending.length || this.running.size) {
      this.flush();
      await Promise.allSettled([...this.running]);
    }
    this.unschedule();
  }

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxItems) this.flush();
      else this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || !this.pending.length) return;
    const go = () => {
      this.scheduled = undefined;
      this.flush();
    };
    this.scheduled = this.gatherMs > 0 ? setTimeout(go, this.gatherMs) : setImmediate(go);
  }

  private unschedule(): void {
    if (this.scheduled === undefined) return;
    clearTimeout(this.scheduled as NodeJS.Timeout);
    clearImmediate(this.scheduled as NodeJS.Immediate);
    this.scheduled = undefined;
  }

  private flush(): void {
    while (this.pending.length && this.running.size < this.maxInFlight) {
      const batch = this.pending.splice(0, this.maxItems);
      // A statement for many callers belongs to none of their traces: it would show in the first one's alone.
      const running: Promise<void> = outsideAnyTrace(() => this.run(batch.map((entry) => entry.item)))
        .then(
          (outputs) =>
            batch.forEach((entry, index) => {
              const output = outputs[index];
              if (output instanceof RejectedItem) entry.reject(output.error);
              else entry.resolve(output as O);
            }),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.running.delete(running);
          this.schedule();
        });
      this.running.add(running);
      // A partial batch: what arrives in this turn still joins the next one.
      if (this.pending.length < this.maxItems) break;
    }
    if (this.pending.length && this.running.size < this.maxInFlight) this.schedule();
  }
}

/** The output of a batch item that failed on its own (see `isolatingFailures`). */
export class RejectedItem {
  constructor(readonly error: unknown) {}
}

export function rejectItem(error: unknown): RejectedItem {
  return new RejectedItem(error);
}

/**
 * Runs the items one by one, for a batch that failed as a whole: one bad item
 * (a value the database refuses) then fails alone, not its neighbours.
 */
export async function eachAlone<I, O>(items: I[], single: (item: I) => Promise<O>): Promise<Array<O | RejectedItem>> {
  const settled = await Promise.allSettled(items.map(single));
  return settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : rejectItem(outcome.reason)));
}

/**
 * A batch run whose whole-batch failure is retried item by item, so a bad
 * item fails alone and not its neighbours; a batch of one fails as it is.
 */
export function isolatingFailures<I, O>(many: (items: I[]) => Promise<O[]>): (items: I[]) => Promise<Array<O | RejectedItem>> {
  return async (items) => {
    try {
      return await many(items);
    } catch (error) {
      if (items.length === 1) throw error;
      return eachAlone(items, async (item) => (await many([item]))[0] as O);
    }
  };
}
