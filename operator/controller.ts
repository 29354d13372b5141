import type { Logger } from 'pino';
import { KINDS, type ResourceKind } from '../infra/kube/constants.js';
import type { SharedInformer } from '../infra/kube/informer-set.js';
import type { KubeObject } from '../infra/kube/resources.js';
import { GenerationFilter } from './generation-filter.js';
import type { OperatorMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import type { Outcome } from './reconcile.js';

export interface ControllerOptions {
  /** The process's informer of the kind's resources: every resource of the namespace, not only the API's (one made with kubectl is reconciled, and validated, too). */
  informer: SharedInformer<KubeObject>;
  kind: ResourceKind;
  reconcile: (name: string) => Promise<Outcome>;
  logger: Logger;
  metrics: OperatorMetrics;
  workers: number;
  /** First retry delay of a failing key; it doubles per failure up to maxBackoffMs. */
  retryBaseMs: number;
  /** Cap of the retry backoff (also how long an unreachable endpoint waits for its next probe at most). */
  maxBackoffMs: number;
}

/**
 * Follows one kind through the process's shared informer, queues the key
 * (`namespace/name`) of every change, and lets a few workers reconcile keys
 * one at a time each. What happened (added, modified, deleted) is
 * deliberately ignored: the reconcile reads the object.
 */
export class Controller {
  private readonly queue: WorkQueue;
  private readonly generations = new GenerationFilter();
  private workers: Array<Promise<void>> = [];
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: ControllerOptions) {
    this.queue = new WorkQueue({ baseDelayMs: options.retryBaseMs, maxDelayMs: options.maxBackoffMs });
    options.metrics.queueDepth.set({ kind: KINDS[options.kind].kind }, 0);
  }

  private get informer(): SharedInformer<KubeObject> {
    return this.options.informer;
  }

  get depth(): number {
    return this.queue.length;
  }

  /** Queues every resource of the cache that `matches`: something it depends on (its Secret) changed. */
  requeueWhere(matches: (resource: KubeObject) => boolean): void {
    for (const resource of this.informer.list()) if (matches(resource)) this.queue.add(this.keyOf(resource.metadata.name));
  }

  /** Queues every cached resource (a new leader reconciles them all), then each change. */
  async start(): Promise<void> {
    this.unsubscribe = this.informer.subscribe((name, object) => {
      if (this.generations.changed(name, object)) this.queue.add(this.keyOf(name));
    });
    await this.informer.whenSynced();
    this.workers = Array.from({ length: this.options.workers }, () => this.work());
    this.options.logger.info({ kind: KINDS[this.options.kind].kind, resources: this.informer.list().length }, 'controller started');
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  private keyOf(name: string): string {
    return `${this.informer.collection.namespace}/${name}`;
  }

  private async work(): Promise<void> {
    for (let key = await this.queue.get(); key !== undefined; key = await this.queue.get()) {
      try {
        await this.process(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    const { kind, metrics, logger } = this.options;
    const name = key.slice(key.indexOf('/') + 1);
    const labels = { kind: KINDS[kind].kind };
    const stopTimer = metrics.reconcileDuration.startTimer(labels);
    try {
      const outcome = await this.options.reconcile(name);
      metrics.reconciles.inc({ ...labels, result: outcome.result });
      if (outcome.retry) {
        const delay = this.queue.addRateLimited(key);
        logger.debug({ key, result: outcome.result, retryInMs: delay }, 'reconciled; retrying later');
      } else {
        this.queue.forget(key);
        if (outcome.requeueAfterMs) this.queue.addAfter(key, outcome.requeueAfterMs);
      }
    } catch (error) {
      metrics.reconciles.inc({ ...labels, result: 'error' });
      const delay = this.queue.addRateLimited(key);
      logger.warn({ err: error, key, retryInMs: delay }, 'reconcile failed; retrying with backoff');
    } finally {
      stopTimer();
      metrics.queueDepth.set(labels, this.queue.length);
    }
  }
}
