import type { InferenceService } from '../../infra/connectors/kserve/inference-service.js';
import { InformerSet } from '../../infra/kube/informer-set.js';
import type { ListWatch } from '../../infra/kube/informer.js';
import type { Collection } from '../../infra/kube/paths.js';
import type { KubeObject } from '../../infra/kube/resources.js';
import { createLogger } from '../../infra/logging/logger.js';

/** Shared informers over fixed lists per namespace, as client-node's look to the InformerSet; a namespace in `failing` cannot be listed. */
export function fixedInformers(byNamespace: Record<string, InferenceService[]>, failing: string[] = []): InformerSet {
  return new InformerSet(createLogger('silent'), async <T extends KubeObject>(collection: Collection) => {
    const items = (byNamespace[collection.namespace] ?? []) as unknown as T[];
    const callbacks: Array<(error: unknown) => void> = [];
    return {
      on: (verb: string, callback: (error: unknown) => void) => verb === 'error' && callbacks.push(callback),
      list: () => items,
      get: (name: string) => items.find((o) => o.metadata.name === name),
      start: async () => (failing.includes(collection.namespace) ? callbacks.forEach((callback) => callback(new Error('forbidden'))) : undefined),
      stop: async () => undefined,
    } as unknown as ListWatch<T>;
  });
}

/** An InferenceService in `namespace`, ready or not, on the predictor revision given. */
export function inferenceService(namespace: string, name: string, revision: string | undefined, ready = true, pinned?: string): InferenceService {
  const status = ready ? 'True' : 'False';
  return {
    apiVersion: 'serving.kserve.io/v1beta1',
    kind: 'InferenceService',
    metadata: { name, namespace, ...(pinned ? { annotations: { 'didyma.io/version': pinned } } : {}) },
    status: {
      conditions: [
        { type: 'Ready', status },
        { type: 'PredictorReady', status },
      ],
      components: { predictor: revision ? { latestReadyRevision: revision } : {} },
    },
  };
}
