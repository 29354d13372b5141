import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { ConnectorCatalog } from '../connectors/registry.js';
import type { ServerProxy } from '../connectors/types.js';
import type { HttpClient } from '../net/http-client.js';
import type { ModelRow } from '../../features/models/store.js';
import type { DeploymentRow } from '../../features/deployments/store.js';
import type { KubeConnection } from './connection.js';
import { configEntryKey, resourceName } from './names.js';
import { paths } from './paths.js';
import { parseEntries, type DeploymentEntry, type ProxyConfigEntry } from './proxy-config.js';
import { RestartingInformer } from './informer.js';
import type { KubeObject } from './resources.js';
import { SecretCache } from './secrets.js';
import { workspaceName } from './rows.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** Worth retrying later: the operator has not (re)configured the deployment yet. */
class NotConfiguredYet extends Error {
  readonly transient = true;
}

export interface ClusterProxyResolverDeps {
  kube: KubeConnection;
  configMap: string;
  catalog: ConnectorCatalog;
  http: HttpClient;
  db: Db;
  logger: Logger;
  secretTtlMs?: number;
}

/**
 * The executor's view of the proxy configuration in Kubernetes mode: it
 * watches the operator's ConfigMap and builds server proxies from its entries
 * and the Secrets they name, so a changed configuration applies to the next
 * invocation without a restart.
 */
export class ClusterProxyResolver {
  private entries = new Map<string, ProxyConfigEntry>();
  private readonly informer: RestartingInformer<ConfigMap>;
  private readonly secrets: SecretCache;

  constructor(private readonly deps: ClusterProxyResolverDeps) {
    this.secrets = new SecretCache(deps.kube, deps.secretTtlMs ?? 30_000);
    const { namespace } = deps.kube;
    // One object: RBAC can then grant the executor this ConfigMap only.
    const fieldSelector = `metadata.name=${deps.configMap}`;
    this.informer = new RestartingInformer<ConfigMap>({
      informer: async () => {
        const api = await deps.kube.api();
        return api.informer(paths.configMaps(namespace), () => api.list<ConfigMap>('v1', 'ConfigMap', namespace, { fieldSelector }), fieldSelector);
      },
      onChange: (_name, configMap) => this.replace(configMap),
      logger: deps.logger,
    });
  }

  /** Ready once the ConfigMap has been read (start resolves then). */
  get synced(): boolean {
    return this.informer.hasSynced;
  }

  async start(): Promise<void> {
    await this.informer.start();
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }

  /** The server proxy of the deployment that serves `model`. */
  async resolve(model: ModelRow): Promise<ServerProxy> {
    const deployment = await this.deps.db<DeploymentRow>('deployments').where({ id: model.deployment_id }).first();
    if (!deployment) throw new Error(`The deployment of ${model.model_code} ${model.version} no longer exists.`);
    const workspace = await workspaceName(this.deps.db, deployment.workspace_id);
    const entry = this.entries.get(configEntryKey('deployment', resourceName('deployment', workspace, deployment.deployment_key)));
    if (entry?.kind !== 'ModelDeployment') {
      throw new NotConfiguredYet(`Deployment "${deployment.deployment_key}" has no proxy configuration yet (the operator has not reconciled its ModelDeployment).`);
    }
    return this.proxyOf(entry);
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
