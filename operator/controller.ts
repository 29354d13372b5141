import type { Logger } from 'pino';
import type { KubeConnection } from '../infra/kube/connection.js';
import { API_VERSION, KINDS, type ResourceKind } from '../infra/kube/constants.js';
import { RestartingInformer } from '../infra/kube/informer.js';
import { paths } from '../infra/kube/paths.js';
import type { KubeObject } from '../infra/kube/resources.js';
import { GenerationFilter } from './generation-filter.js';
import type { OperatorMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import type { Outcome } from './reconcile.js';

export interface ControllerOptions {
  kube: KubeConnection;
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
 * List+watch one kind, queue the key (`namespace/name`) of every change, and
 * let a few workers reconcile keys one at a time each. What happened (added,
 * modified, deleted) is deliberately ignored: the reconcile reads the object.
 */
export class Controller {
  private readonly queue: WorkQueue;
  private readonly informer: RestartingInformer<KubeObject>;
  private readonly generations = new GenerationFilter();
  private workers: Array<Promise<void>> = [];

  constructor(private readonly options: ControllerOptions) {
    this.queue = new WorkQueue({ baseDelayMs: options.retryBaseMs, maxDelayMs: options.maxBackoffMs });
    const { kube, kind } = options;
    this.informer = new RestartingInformer<KubeObject>({
      // Every resource of the kind, not only the API's: one made with kubectl is reconciled (and validated) too.
      informer: async () => {
        const api = await kube.api();
        return api.informer(paths.resources(kind, kube.namespace), () => api.list<KubeObject>(API_VERSION, KINDS[kind].kind, kube.namespace));
      },
      onChange: (name, object) => {
        if (this.generations.changed(name, object)) this.queue.add(this.keyOf(name));
      },
      logger: options.logger,
    });
    options.metrics.queueDepth.set({ kind: KINDS[options.kind].kind }, 0);
  }

  get depth(): number {
    return this.queue.length;
  }

  /** Queues every resource of the cache that `matches`: something it depends on (its Secret) changed. */
  requeueWhere(matches: (resource: KubeObject) => boolean): void {
    for (const resource of this.informer.list()) if (matches(resource)) this.queue.add(this.keyOf(resource.metadata.name));
  }

  async start(): Promise<void> {
    await this.informer.start();
    this.workers = Array.from({ length: this.options.workers }, () => this.work());
    this.options.logger.info({ kind: KINDS[this.options.kind].kind, resources: this.informer.list().length }, 'controller started');
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.informer.stop();
    await Promise.all(this.workers);
  }

  private keyOf(name: string): string {
    return `${this.options.kube.namespace}/${name}`;
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
