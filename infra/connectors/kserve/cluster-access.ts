import type { KubeConnection } from '../../kube/connection.js';
import type { InformerSet } from '../../kube/informer-set.js';
import { collections } from '../../kube/paths.js';
import type { KServeAccess, NamespaceGrants } from './access.js';
import { INFERENCE_SERVICE_KIND, KSERVE_API_VERSION, type InferenceService } from './inference-service.js';

/** KServeAccess on the process's cluster connection and shared informers. */
export class ClusterKServeAccess implements KServeAccess {
  constructor(
    readonly grants: NamespaceGrants,
    private readonly kube: KubeConnection,
    private readonly informers: InformerSet,
  ) {}

  async cached(namespace: string, name: string): Promise<InferenceService | undefined> {
    const informer = this.informers.informer<InferenceService>(collections.inferenceServices(namespace));
    await informer.whenSynced();
    return informer.get(name);
  }

  async list(namespace: string, labelSelector?: string): Promise<InferenceService[]> {
    const api = await this.kube.api();
    return (await api.list<InferenceService>(KSERVE_API_VERSION, INFERENCE_SERVICE_KIND, namespace, { labelSelector })).items;
  }
}
