/**
 * Groups calls made in the same turn of the event loop into one database
 * statement. Under light load every batch holds one call and adds no delay
 * (it runs on setImmediate); under heavy load the event loop handles several
 * arrivals per turn and a batch saves a round trip per extra call.
 */
export class MicroBatch<I, O> {
  private pending: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private scheduled = false;

  /** `run` gets the items of one batch and returns one output per item, in order. */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxItems = 100,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxItems) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.maxItems);
    if (this.pending.length && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (!batch.length) return;
    this.run(batch.map((entry) => entry.item)).then(
      (outputs) => batch.forEach((entry, index) => entry.resolve(outputs[index] as O)),
      (error: unknown) => batch.forEach((entry) => entry.reject(error)),
    );
  }
}
