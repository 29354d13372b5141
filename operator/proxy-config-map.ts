import type { Logger } from 'pino';
import type { KubeConnection } from '../infra/kube/connection.js';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { FIELD_MANAGERS, LABELS, MANAGED_BY } from '../infra/kube/constants.js';
import { isConflict, isNotFound } from '../infra/kube/errors.js';
import { objectRef } from '../infra/kube/resources.js';

/**
 * The ConfigMap executors read. Each entry is set or removed with a JSON
 * merge patch of that key alone: reconciles of different resources never
 * conflict, and nothing is written when an entry is already right.
 */
export class ProxyConfigMap {
  constructor(
    private readonly kube: KubeConnection,
    readonly name: string,
    private readonly logger: Logger,
  ) {}

  /** Sets the entry; false when it already had this value. */
  async put(key: string, text: string): Promise<boolean> {
    const current = await this.read();
    if (current?.data?.[key] === text) return false;
    if (!current) {
      try {
        const api = await this.kube.api();
        await api.core.createNamespacedConfigMap({ namespace: this.kube.namespace, body: this.fresh({ [key]: text }), fieldManager: FIELD_MANAGERS.operator });
        return true;
      } catch (error) {
        if (!isConflict(error)) throw error; // created meanwhile by another writer: patch it
      }
    }
    await this.patch({ [key]: text });
    this.logger.info({ configMap: this.name, entry: key }, 'proxy configuration entry written');
    return true;
  }

  /** Removes the entry; false when there was none. */
  async remove(key: string): Promise<boolean> {
    const current = await this.read();
    if (current?.data?.[key] === undefined) return false;
    await this.patch({ [key]: null });
    this.logger.info({ configMap: this.name, entry: key }, 'proxy configuration entry removed');
    return true;
  }

  private async patch(data: Record<string, string | null>) {
    const api = await this.kube.api();
    return api.mergePatch({ ...objectRef('v1', 'ConfigMap', this.kube.namespace, this.name), data }, FIELD_MANAGERS.operator);
  }

  private async read(): Promise<V1ConfigMap | undefined> {
    try {
      return await (await this.kube.api()).core.readNamespacedConfigMap({ name: this.name, namespace: this.kube.namespace });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private fresh(data: Record<string, string>): V1ConfigMap {
    return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: this.name, namespace: this.kube.namespace, labels: { [LABELS.managedBy]: MANAGED_BY } }, data };
  }
}
