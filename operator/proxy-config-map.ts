import type { Logger } from 'pino';
import type { KubeConnection } from '../core/kube/connection.js';
import { isConflict, isNotFound } from '../core/kube/client.js';
import { FIELD_MANAGERS, LABELS, MANAGED_BY } from '../core/kube/constants.js';
import { paths } from '../core/kube/paths.js';
import type { KubeObject } from '../core/kube/resources.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

const AS_OPERATOR = { fieldManager: FIELD_MANAGERS.operator };

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
        await this.kube.client.create(paths.configMap(this.kube.namespace), this.fresh({ [key]: text }), AS_OPERATOR);
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

  private patch(data: Record<string, string | null>) {
    return this.kube.client.patch(paths.configMap(this.kube.namespace, this.name), 'merge', { data }, AS_OPERATOR);
  }

  private async read(): Promise<ConfigMap | undefined> {
    try {
      return await this.kube.client.get<ConfigMap>(paths.configMap(this.kube.namespace, this.name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private fresh(data: Record<string, string>): ConfigMap {
    return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: this.name, namespace: this.kube.namespace, labels: { [LABELS.managedBy]: MANAGED_BY } }, data };
  }
}
