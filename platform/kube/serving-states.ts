import type { Db } from '../../infra/db/database.js';
import type { InferenceService } from '../../infra/connectors/kserve/inference-service.js';
import { componentStates } from '../../infra/connectors/kserve/serving-state.js';
import type { ServingStatesStore } from '../../features/models/serving-states.store.js';
import { ServicesWatchTask, syncedServices, type WatchTaskDeps } from './kserve-watch.js';

export interface ServingStatesDeps extends WatchTaskDeps {
  db: Db;
  store: ServingStatesStore;
}

/**
 * The one writer of `serving_states`: what the shared watches of the opened
 * namespaces see of each InferenceService, so that the public server, which
 * has no Kubernetes access, shows a model's state now. A pass writes each
 * service whose state changed (the store leaves equal rows alone) and drops
 * services gone from a namespace's list; every replica of the private server
 * writes the same values, so they need no coordination.
 */
export class KServeServingStates {
  private readonly task: ServicesWatchTask;

  constructor(private readonly deps: ServingStatesDeps) {
    this.task = new ServicesWatchTask(deps, 'kserve_serving_states', () => this.runOnce());
  }

  /** Watches every opened namespace and writes after each change of a service. */
  start(): void {
    this.task.start();
  }

  /** One pass over the opened namespaces; a namespace that cannot be listed yet is left as recorded. */
  async runOnce(): Promise<void> {
    for (const namespace of this.deps.grants.keys()) {
      const services = await syncedServices(this.deps.informers, namespace, this.deps.logger);
      if (services) await this.record(namespace, services);
    }
  }

  private async record(namespace: string, services: readonly InferenceService[]): Promise<void> {
    const { db, store } = this.deps;
    for (const service of services) await store.put(db, namespace, service.metadata.name, componentStates(service));
    await store.keepOnly(
      db,
      namespace,
      services.map((service) => service.metadata.name),
    );
  }
}
