import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Runner } from '../../infra/db/database.js';
import type { ConnectorCatalog } from '../../infra/connectors/registry.js';
import type { ServerProxy } from '../../infra/connectors/types.js';
import type { HttpClient } from '../../infra/net/http-client.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import { configEntryKey, proxyConfigMapName, resourceName } from '../../infra/kube/names.js';
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
  /** What the names of the proxy ConfigMaps start with (DIDYMA_PROXY_CONFIGMAP). */
  prefix: string;
  /** The process's informer of the proxy ConfigMaps, one per workspace, selected by their label. */
  configMaps: SharedInformer<ConfigMap>;
  catalog: ConnectorCatalog;
  http: HttpClient;
  db: Runner;
  logger: Logger;
  secretTtlMs?: number;
}

/** Where a deployment's entry is (its workspace's ConfigMap, its key there), and its key for messages. */
interface EntryOf {
  configMap: string;
  entryKey: string;
  deploymentKey: string;
}

/**
 * The executor's view of the proxy configuration in Kubernetes mode: it
 * follows the operator's ConfigMaps (one per workspace) and builds server
 * proxies from their entries and the Secrets they name, so a changed
 * configuration applies to the next invocation without a restart.
 */
export class ClusterProxyResolver implements ProxyResolver {
  /** The entries of each ConfigMap, by its name. */
  private readonly entries = new Map<string, Map<string, ProxyConfigEntry>>();
  private unsubscribe: (() => void) | undefined;
  private readonly secrets: SecretCache;
  // A deployment's key and its workspace's name never change: its entry's key is read once.
  private readonly entryKeys = new LRUCache<number, EntryOf>({ max: 1000 });

  constructor(private readonly deps: ClusterProxyResolverDeps) {
    this.secrets = new SecretCache(deps.kube, deps.secretTtlMs ?? 30_000);
  }

  /** Ready once the ConfigMaps have been listed (start resolves then). */
  get synced(): boolean {
    return this.deps.configMaps.hasSynced;
  }

  async start(): Promise<void> {
    this.unsubscribe ??= this.deps.configMaps.subscribe((name, configMap) => this.replace(name, configMap));
    await this.deps.configMaps.whenSynced();
  }

  /** Stops following; the informer is the process's (its InformerSet stops it). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** The server proxy of the deployment that serves `model`. */
  async resolve(model: ServedModel): Promise<ServerProxy> {
    const { configMap, entryKey, deploymentKey } = await this.entryOf(model);
    const entry = this.entries.get(configMap)?.get(entryKey);
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
    const found = { configMap: proxyConfigMapName(this.deps.prefix, workspace), entryKey: configEntryKey('deployment', resourceName('deployment', workspace, deployment.deployment_key)), deploymentKey: deployment.deployment_key };
    this.entryKeys.set(model.deployment_id, found);
    return found;
  }

  private async proxyOf(entry: DeploymentEntry): Promise<ServerProxy> {
    const secrets = entry.secretRef ? await this.secrets.get(entry.secretRef.name) : {};
    return this.deps.catalog.createServerProxy(entry.serverProxy.className, { ...entry.serverProxy.init, ...secrets }, { http: this.deps.http, deploymentKey: entry.key, workspace: entry.workspace });
  }

  private replace(name: string, configMap: ConfigMap | undefined): void {
    if (!configMap) {
      this.entries.delete(name);
      this.deps.logger.debug({ configMap: name }, 'proxy configuration removed');
      return;
    }
    const { entries, malformed } = parseEntries(configMap.data);
    if (malformed.length) this.deps.logger.warn({ configMap: name, malformed }, 'skipping malformed proxy configuration entries');
    this.entries.set(name, entries);
    this.deps.logger.debug({ configMap: name, entries: entries.size }, 'proxy configuration updated');
  }
}
