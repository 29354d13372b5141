import { LRUCache } from 'lru-cache';
import type { ChangeFeed, ChangeTopic } from './change-feed.js';

export interface ReadCacheOptions {
  /** Entries kept at most; the least recently used go first. */
  maxEntries: number;
  /** A bound on any entry's age, on top of change notifications. */
  maxAgeMs: number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  generation: number;
}

/**
 * A read-through cache of rows the request path reads on every call. An
 * entry is served only while its topic's generation is the one it was read
 * under (see ChangeFeed); a value read while a change happened is not kept,
 * and with no notifications every read goes to the database.
 */
export class ReadCache<V> {
  private readonly entries: LRUCache<string, Entry<V>>;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly topic: ChangeTopic,
    options: ReadCacheOptions,
  ) {
    // ttlResolution 0 reads the clock on every check, so an entry is never served past its age.
    this.entries = new LRUCache({ max: options.maxEntries, ttl: options.maxAgeMs, ttlResolution: 0, perf: { now: options.now ?? Date.now } });
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const generation = this.feed.generation(this.topic);
    if (generation === undefined) return load();
    const hit = this.entries.get(key);
    if (hit && hit.generation === generation) return hit.value;
    const value = await load();
    if (this.feed.generation(this.topic) === generation) this.entries.set(key, { value, generation });
    return value;
  }
}
