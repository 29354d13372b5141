import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { KubeClient, RequestOptions, Watching } from './client.js';
import { KubeApiError } from './client.js';
import type { KubeObject } from './resources.js';

export interface ReflectorOptions<T extends KubeObject> {
  client: KubeClient;
  /** Collection path, e.g. `/api/v1/namespaces/x/configmaps`. */
  path: string;
  /** Label or field selector. */
  query?: RequestOptions['query'];
  /** Every change of the cached set, by name: the object, or undefined once it is gone. */
  onChange: (name: string, object: T | undefined) => void;
  logger: Logger;
  /** Delay before listing again after a failure. */
  retryMs?: number;
}

/**
 * List, then watch from the list's resourceVersion, and keep a cache of the
 * objects. A watch that ends is resumed from the last version seen; one that
 * is too old (410 Gone) or fails starts over with a list, whose differences
 * with the cache are reported too, so no change is ever missed.
 */
export class Reflector<T extends KubeObject> {
  readonly cache = new Map<string, T>();
  private watching: Watching | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private resourceVersion = '';

  constructor(private readonly options: ReflectorOptions<T>) {}

  /** Resolves after the first list (the cache is complete); keeps watching in the background. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.relist();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watching?.stop();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.watchOnce();
      } catch (error) {
        if (this.stopped) return;
        const gone = error instanceof KubeApiError && error.status === 410;
        if (!gone) this.options.logger.warn({ err: error, path: this.options.path }, 'watch failed; listing again');
        if (!gone) await sleep(this.options.retryMs ?? 1000);
        await this.relistUntilDone();
      }
    }
  }

  private async watchOnce(): Promise<void> {
    // The server ends every watch after a while; jitter spreads the reconnections.
    const timeoutSeconds = 240 + Math.floor(Math.random() * 120);
    this.watching = await this.options.client.watch<T>(this.options.path, { ...this.options.query, resourceVersion: this.resourceVersion, timeoutSeconds }, (event) => {
      this.resourceVersion = event.object.metadata.resourceVersion ?? this.resourceVersion;
      if (event.type === 'BOOKMARK') return;
      const name = event.object.metadata.name;
      if (event.type === 'DELETED') this.cache.delete(name);
      else this.cache.set(name, event.object);
      this.options.onChange(name, event.type === 'DELETED' ? undefined : event.object);
    });
    if (this.stopped) this.watching.stop();
    await this.watching.done.catch((error: unknown) => {
      if (!this.stopped) throw error;
    });
  }

  private async relistUntilDone(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.relist();
        return;
      } catch (error) {
        this.options.logger.warn({ err: error, path: this.options.path }, 'list failed; retrying');
        await sleep(this.options.retryMs ?? 1000);
      }
    }
  }

  private async relist(): Promise<void> {
    const { items, resourceVersion } = await this.options.client.list<T>(this.options.path, this.options.query);
    const seen = new Set<string>();
    for (const item of items) {
      const name = item.metadata.name;
      seen.add(name);
      const before = this.cache.get(name);
      this.cache.set(name, item);
      if (before?.metadata.resourceVersion !== item.metadata.resourceVersion) this.options.onChange(name, item);
    }
    for (const name of [...this.cache.keys()]) {
      if (seen.has(name)) continue;
      this.cache.delete(name);
      this.options.onChange(name, undefined);
    }
    this.resourceVersion = resourceVersion;
  }
}

