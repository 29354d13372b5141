import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Runner } from '../../infra/db/database.js';
import type { ConnectorCatalog } from '../../infra/connectors/registry.js';
import type { ServerProxy } from '../../infra/connectors/types.js';
import type { HttpClient } from '../../infra/net/http-client.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import { configEntryKey, resourceName } from '../../infra/kube/names.js';
import { parseEntries, type DeploymentEntry, type ProxyConfigEntry } from '../../infra/kube/proxy-config.js';
import type { SharedInformer } from '../../infra/kube/informer-set.js';
import type { KubeObject } from '../../infra/kube/resources.js';
import { SecretCache } from '../../infra/kube/secrets.js';
import { deploymentGone, type ProxyResolver, type ServedModel } from '../../features/deployments/proxy-resolver.js';
import { deploymentsStore } from '../../features/deployments/store.js';
import { workspacesStore } from '../../features/identity/workspaces.store.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** Worth retrying later: the operator has not (re)configured the deployment yet. */
class NotConfiguredYet extends Error {
  readonly transient = true;
  readonly kind = 'unreachable';
}

export interface ClusterProxyResolverDeps {
  kube: KubeConnection;
  configMap: string;
  /** The process's informer of the proxy configuration. */
  configMaps: SharedInformer<ConfigMap>;
  catalog: ConnectorCatalog;
  http: HttpClient;
  db: Runner;
  logger: Logger;
  secretTtlMs?: number;
}

/** Where a deployment's entry is in the ConfigMap, and its key for messages. */
interface EntryOf {
  entryKey: string;
  deploymentKey: string;
}

/**
 * The executor's view of the proxy configuration in Kubernetes mode: it
 * watches the operator's ConfigMap and builds server proxies from its entries
 * and the Secrets they name, so a changed configuration applies to the next
 * invocation without a restart.
 */
export class ClusterProxyResolver implements ProxyResolver {
  private entries = new Map<string, ProxyConfigEntry>();
  private unsubscribe: (() => void) | undefined;
  private readonly secrets: SecretCache;
  // A deployment's key and its workspace's name never change: its entry's key is read once.
  private readonly entryKeys = new LRUCache<number, EntryOf>({ max: 1000 });

  constructor(private readonly deps: ClusterProxyResolverDeps) {
    this.secrets = new SecretCache(deps.kube, deps.secretTtlMs ?? 30_000);
  }

  /** Ready once the ConfigMap has been read (start resolves then). */
  get synced(): boolean {
    return this.deps.configMaps.hasSynced;
  }

  async start(): Promise<void> {
    this.unsubscribe ??= this.deps.configMaps.subscribe((_name, configMap) => this.replace(configMap));
    await this.deps.configMaps.whenSynced();
  }

  /** Stops following; the informer is the process's (its InformerSet stops it). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** The server proxy of the deployment that serves `model`. */
  async resolve(model: ServedModel): Promise<ServerProxy> {
    const { entryKey, deploymentKey } = await this.entryOf(model);
    const entry = this.entries.get(entryKey);
    if (entry?.kind !== 'ModelDeployment') {
      throw new NotConfiguredYet(`Deployment "${deploymentKey}" has no proxy configuration yet (the operator has not reconciled its ModelDeployment).`);
    }
    return this.proxyOf(entry);
  }

  private async entryOf(model: ServedModel): Promise<EntryOf> {
    const known = this.entryKeys.get(model.deployment_id);
    if (known) return known;
    const deployment = await deploymentsStore.byId(this.deps.db, model.deployment_id);
    if (!deployment) throw deploymentGone(model);
    const workspace = await workspacesStore.nameById(this.deps.db, deployment.workspace_id);
    if (workspace === undefined) throw deploymentGone(model);
    const found = { entryKey: configEntryKey('deployment', resourceName('deployment', workspace, deployment.deployment_key)), deploymentKey: deployment.deployment_key };
    this.entryKeys.set(model.deployment_id, found);
    return found;
  }

  private async proxyOf(entry: DeploymentEntry): Promise<ServerProxy> {
    const secrets = entry.secretRef ? await this.secrets.get(entry.secretRef.name) : {};
    return this.deps.catalog.createServerProxy(entry.serverProxy.className, { ...entry.serverProxy.init, ...secrets }, { http: this.deps.http, deploymentKey: entry.key });
  }

  private replace(configMap: ConfigMap | undefined): void {
    const { entries, malformed } = parseEntries(configMap?.data);
    if (malformed.length) this.deps.logger.warn({ configMap: this.deps.configMap, malformed }, 'skipping malformed proxy configuration entries');
    this.entries = entries;
    this.deps.logger.info({ configMap: this.deps.configMap, entries: entries.size }, 'proxy configuration updated');
  }
}
