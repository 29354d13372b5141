import type { Logger } from 'pino';
import type { InformerSet, SharedInformer } from '../../infra/kube/informer-set.js';
import { collections } from '../../infra/kube/paths.js';
import type { InferenceService } from '../../infra/connectors/kserve/inference-service.js';
import type { NamespaceGrants } from '../../infra/connectors/kserve/access.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
import { NO_INTERVAL_MS } from './resync.js';

/** The process's shared watch of a namespace's InferenceServices. */
export const inferenceServicesOf = (informers: InformerSet, namespace: string): SharedInformer<InferenceService> => informers.informer<InferenceService>(collections.inferenceServices(namespace));

/** The namespace's services as its shared watch caches them (started on the first ask); undefined, logged, while it cannot be listed. */
export async function syncedServices(informers: InformerSet, namespace: string, logger: Logger): Promise<readonly InferenceService[] | undefined> {
  const informer = inferenceServicesOf(informers, namespace);
  try {
    await informer.whenSynced();
  } catch (error) {
    logger.warn({ namespace, err: error }, 'could not list the InferenceServices of the namespace; tried again next pass');
    return undefined;
  }
  return informer.list();
}

/** What a task over the opened namespaces' InferenceServices needs. */
export interface WatchTaskDeps {
  informers: InformerSet;
  /** The namespaces the platform's operator opened (DIDYMA_KSERVE_NAMESPACES): the ones watched. */
  grants: NamespaceGrants;
  scheduler: Scheduler;
  logger: Logger;
  /** Between passes that catch up with what a change may have missed (0: none). */
  intervalMs: number;
  /** Other changes that wake it (committed changes of deployments); returns the unsubscribe. */
  wakeups?: (wake: () => void) => () => void;
}

/**
 * A background task whose pass runs after each change of a service of the
 * opened namespaces (their watches started by the pass that needs them),
 * after each of `wakeups`, and every interval.
 */
export class ServicesWatchTask {
  private readonly task: ScheduledTask;
  private readonly unsubscribes: Array<() => void> = [];

  constructor(
    private readonly deps: WatchTaskDeps,
    name: string,
    run: () => Promise<void>,
  ) {
    this.task = deps.scheduler.add({
      name,
      intervalMs: deps.intervalMs > 0 ? deps.intervalMs : NO_INTERVAL_MS,
      run,
      afterStop: async () => {
        for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
      },
    });
  }

  start(): void {
    if (this.unsubscribes.length === 0) {
      const wake = () => this.task.wake();
      for (const namespace of this.deps.grants.keys()) this.unsubscribes.push(inferenceServicesOf(this.deps.informers, namespace).subscribe(wake, false));
      if (this.deps.wakeups) this.unsubscribes.push(this.deps.wakeups(wake));
    }
    this.task.start();
  }
}
