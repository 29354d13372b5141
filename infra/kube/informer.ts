import type { Informer, ObjectCache } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject } from './resources.js';

export type ListWatch<T extends KubeObject> = Informer<T> & ObjectCache<T>;

export interface InformerOptions<T extends KubeObject> {
  /** Builds client-node's informer (see KubeApi.informer). */
  informer: () => Promise<ListWatch<T>>;
  /** Every change of the cached set, by name: the object, or undefined once it is gone. */
  onChange: (name: string, object: T | undefined) => void;
  logger: Logger;
  /** First delay before starting again after a failure; it doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
}

/**
 * Keeps a client-node informer running. The informer relists after a 410 Gone
 * by itself, but stops at any other error: it is started again after a
 * backoff, resuming its watch from the last version it saw. Synced (ready)
 * once its first list and watch are in.
 */
export class RestartingInformer<T extends KubeObject> {
  private informer: ListWatch<T> | undefined;
  private synced = false;
  private stopped = false;
  private failure: unknown;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private restarting: Promise<void> | undefined;

  constructor(private readonly options: InformerOptions<T>) {}

  get hasSynced(): boolean {
    return this.synced;
  }

  list(): readonly T[] {
    return this.informer?.list() ?? [];
  }

  get(name: string, namespace: string): T | undefined {
    return this.informer?.get(name, namespace);
  }

  /** Resolves once synced; rejects with the error when the first list or watch fails. */
  async start(): Promise<void> {
    this.stopped = false;
    const informer = await this.options.informer();
    const { onChange } = this.options;
    informer.on('add', (object) => onChange(object.metadata.name, object));
    informer.on('update', (object) => onChange(object.metadata.name, object));
    informer.on('delete', (object) => onChange(object.metadata.name, undefined));
    informer.on('error', (error: unknown) => this.failed(error));
    this.informer = informer;
    await this.attempt();
    if (this.failure !== undefined) {
      await informer.stop();
      throw this.failure;
    }
    this.synced = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.restarting;
    await this.informer?.stop();
  }

  /** One start of the informer; its errors arrive (through `failed`) before it returns. */
  private async attempt(): Promise<void> {
    this.failure = undefined;
    await this.informer?.start();
    if (this.failure === undefined) this.failures = 0;
  }

  private failed(error: unknown): void {
    if (this.stopped) return; // stopping aborts the watch, which reports an error too
    this.failure = error ?? new Error('watch failed');
    if (!this.synced) return; // start() rejects with it
    const delay = Math.min((this.options.retryMs ?? 1000) * 2 ** this.failures, this.options.maxRetryMs ?? 30_000);
    this.failures += 1;
    this.options.logger.warn({ err: error, retryInMs: delay }, 'list/watch failed; starting it again');
    this.timer = setTimeout(() => (this.restarting = this.attempt().catch((failure: unknown) => this.failed(failure))), delay);
  }
}
