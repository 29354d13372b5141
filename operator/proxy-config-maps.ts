import type { Logger } from 'pino';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { KubeConnection } from '../infra/kube/connection.js';
import { FIELD_MANAGERS, LABELS, MANAGED_BY } from '../infra/kube/constants.js';
import { isConflict, isNotFound } from '../infra/kube/errors.js';
import type { SharedInformer } from '../infra/kube/informer-set.js';
import { proxyConfigLabel, proxyConfigMapName, workspaceLabel } from '../infra/kube/names.js';
import { objectRef, type KubeObject } from '../infra/kube/resources.js';

export type ProxyConfigMap = KubeObject & { data?: Record<string, string> };

/**
 * The ConfigMaps executors read, one per workspace (`<prefix>-<workspace>-<digest>`,
 * labelled didyma.io/proxy-config=<prefix>): a workspace's entries share no
 * size cap with another's, and a change rewrites its workspace's object only.
 * Each entry is set or removed with a JSON merge patch of that key alone, so
 * reconciles of different resources never conflict and nothing is written
 * when an entry is already right; a ConfigMap left empty is deleted.
 */
export class ProxyConfigMaps {
  constructor(
    private readonly kube: KubeConnection,
    readonly prefix: string,
    /** The process's informer of these ConfigMaps: where an entry is, when the resource that wrote it is gone. */
    private readonly cache: SharedInformer<ProxyConfigMap>,
    private readonly logger: Logger,
  ) {}

  nameOf(workspace: string): string {
    return proxyConfigMapName(this.prefix, workspace);
  }

  /** Removes the single ConfigMap of versions before one per workspace, once synced: executors no longer read it. */
  async start(): Promise<void> {
    await this.cache.whenSynced();
    const api = await this.kube.api();
    await api.delete(objectRef('v1', 'ConfigMap', this.kube.namespace, this.prefix));
  }

  async stop(): Promise<void> {}

  /** Sets the entry in its workspace's ConfigMap (and takes it out of any other); false when it already had this value. */
  async put(workspace: string, key: string, text: string): Promise<boolean> {
    const name = this.nameOf(workspace);
    await this.cache.whenSynced();
    await this.removeFrom(this.holders(key).filter((holder) => holder !== name), key);
    const current = await this.read(name);
    if (current?.data?.[key] === text) return false;
    if (!current && (await this.create(name, workspace, { [key]: text }))) return true;
    await this.patch(name, { [key]: text });
    this.logger.info({ configMap: name, entry: key }, 'proxy configuration entry written');
    return true;
  }

  /** Removes the entry from its workspace's ConfigMap, when known, and from any other the cache shows it in; false when there was none. */
  async remove(key: string, workspace?: string): Promise<boolean> {
    await this.cache.whenSynced();
    const names = new Set([...(workspace === undefined ? [] : [this.nameOf(workspace)]), ...this.holders(key)]);
    return this.removeFrom([...names], key);
  }

  private holders(key: string): string[] {
    return this.cache.list().flatMap((configMap) => (configMap.data?.[key] === undefined ? [] : [configMap.metadata.name]));
  }

  private async removeFrom(names: string[], key: string): Promise<boolean> {
    let removed = false;
    for (const name of names) {
      const current = await this.read(name);
      if (current?.data?.[key] === undefined) continue;
      const patched = await this.patch(name, { [key]: null });
      this.logger.info({ configMap: name, entry: key }, 'proxy configuration entry removed');
      if (!Object.keys(patched.data ?? {}).length) await this.deleteIfEmpty(name, patched.metadata?.resourceVersion);
      removed = true;
    }
    return removed;
  }

  /** Deletes a ConfigMap left empty, unless an entry came meanwhile (the resourceVersion precondition). */
  private async deleteIfEmpty(name: string, resourceVersion: string | undefined): Promise<void> {
    const api = await this.kube.api();
    try {
      await api.core.deleteNamespacedConfigMap({ name, namespace: this.kube.namespace, body: { preconditions: { resourceVersion } } });
      this.logger.info({ configMap: name }, 'empty proxy ConfigMap deleted');
    } catch (error) {
      if (!isConflict(error) && !isNotFound(error)) throw error;
    }
  }

  /** Creates the ConfigMap with its first entry; false when another writer created it meanwhile (then patch it). */
  private async create(name: string, workspace: string, data: Record<string, string>): Promise<boolean> {
    const labels = { [LABELS.managedBy]: MANAGED_BY, [LABELS.proxyConfig]: proxyConfigLabel(this.prefix), [LABELS.workspace]: workspaceLabel(workspace) };
    const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: this.kube.namespace, labels }, data };
    try {
      await (await this.kube.api()).core.createNamespacedConfigMap({ namespace: this.kube.namespace, body, fieldManager: FIELD_MANAGERS.operator });
      this.logger.info({ configMap: name, entry: Object.keys(data)[0] }, 'proxy ConfigMap created');
      return true;
    } catch (error) {
      if (!isConflict(error)) throw error;
      return false;
    }
  }

  private async patch(name: string, data: Record<string, string | null>): Promise<V1ConfigMap> {
    const api = await this.kube.api();
    return api.mergePatch<V1ConfigMap>({ ...objectRef('v1', 'ConfigMap', this.kube.namespace, name), data }, FIELD_MANAGERS.operator);
  }

  private async read(name: string): Promise<V1ConfigMap | undefined> {
    try {
      return await (await this.kube.api()).core.readNamespacedConfigMap({ name, namespace: this.kube.namespace });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}
