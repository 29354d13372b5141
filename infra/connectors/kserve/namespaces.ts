import { UpstreamError, type UpstreamRole } from '../errors.js';
import type { ConnectorDeps, ConnectorInit } from '../types.js';
import { namespaceOpenTo, type KServeAccess } from './access.js';
import type { InferenceService } from './inference-service.js';
import { namespacesOf } from './init.js';

/**
 * The InferenceServices one deployment may read: those of its namespaces
 * still opened to its workspace, checked on every call, so a namespace the
 * platform's operator closes is closed at once for deployments made before.
 */
export class DeploymentNamespaces {
  private readonly namespaces: string[];

  constructor(
    private readonly access: KServeAccess,
    init: ConnectorInit,
    private readonly deps: ConnectorDeps,
    private readonly role: UpstreamRole,
  ) {
    this.namespaces = namespacesOf(init);
  }

  /** The service named `name` in the first namespace that has one, from the shared informers' cache. */
  async find(name: string): Promise<InferenceService | undefined> {
    for (const namespace of this.open()) {
      const service = await this.kube(() => this.access.cached(namespace, name));
      if (service) return service;
    }
    return undefined;
  }

  /** Every service of the namespaces the API lists with `labelSelector`, namespace by namespace. */
  async list(labelSelector?: string): Promise<InferenceService[]> {
    const lists = await Promise.all(this.open().map((namespace) => this.kube(() => this.access.list(namespace, labelSelector))));
    return lists.flat();
  }

  /** A failure of the Kubernetes API, as an UpstreamError naming the deployment (worth retrying). */
  private async kube<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const subject = `Deployment "${this.deps.deploymentKey}": the ${this.role} (KServe, through the Kubernetes API)`;
      throw new UpstreamError(this.deps.deploymentKey, `${subject} could not be read.`, true, undefined, undefined, error instanceof Error ? error.message : String(error), 'unreachable');
    }
  }

  private open(): string[] {
    const { workspace, deploymentKey } = this.deps;
    const closed = this.namespaces.filter((namespace) => workspace === undefined || !namespaceOpenTo(this.access.grants, workspace, namespace));
    if (closed.length) {
      throw new UpstreamError(deploymentKey, `Deployment "${deploymentKey}": namespace ${closed.join(', ')} is not opened to its workspace by the platform's operator (DIDYMA_KSERVE_NAMESPACES).`, false);
    }
    return this.namespaces;
  }
}
