import type { ChangeFeed, ChangeTopic } from './change-feed.js';

export interface ReadCacheOptions {
  /** Entries kept at most; the oldest go first. */
  maxEntries: number;
  /** A bound on any entry's age, on top of change notifications. */
  maxAgeMs: number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  generation: number;
  storedAt: number;
}

/**
 * A read-through cache of rows the request path reads on every call. An
 * entry is served only while its topic's generation is the one it was read
 * under (see ChangeFeed); a value read while a change happened is not kept,
 * and with no notifications every read goes to the database.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly now: () => number;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly topic: ChangeTopic,
    private readonly options: ReadCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const generation = this.feed.generation(this.topic);
    if (generation === undefined) return load();
    const hit = this.entries.get(key);
    if (hit && hit.generation === generation && this.now() - hit.storedAt < this.options.maxAgeMs) return hit.value;
    const value = await load();
    if (this.feed.generation(this.topic) === generation) this.store(key, { value, generation, storedAt: this.now() });
    return value;
  }

  private store(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}
