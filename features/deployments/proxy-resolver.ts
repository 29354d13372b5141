import { LRUCache } from 'lru-cache';
import type { Runner } from '../../infra/db/database.js';
import type { ServerProxy } from '../../infra/connectors/types.js';
import type { DeploymentConnectors } from './connectors.js';
import type { DeploymentsStore } from './store.js';

/** What resolving needs of a model: the deployment that serves it, and its name for messages. */
export interface ServedModel {
  deployment_id: number;
  model_code: string;
  version: string;
}

/**
 * The server proxy of the deployment that serves a model, as the executor
 * needs it: from the database, or in Kubernetes mode from the operator's
 * proxy configuration (platform/kube/proxy-resolver.ts).
 */
export interface ProxyResolver {
  resolve(model: ServedModel): Promise<ServerProxy>;
  /** Whether it can answer yet (the cluster's, once its configuration was read). */
  readonly synced: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export const deploymentGone = (model: ServedModel) => new Error(`The deployment of ${model.model_code} ${model.version} no longer exists.`);

/** The proxies of the embedded default and of every mode without Kubernetes: built from the deployment's row. */
export class DatabaseProxyResolver implements ProxyResolver {
  // Deployments are never edited (only soft-deleted, which does not stop queued work):
  // a short-lived proxy per deployment saves a query and a decryption per invocation.
  private readonly proxies = new LRUCache<number, ServerProxy>({ max: 1000, ttl: 10_000 });

  constructor(
    private readonly db: Runner,
    private readonly stores: { deployments: Pick<DeploymentsStore, 'byId'> },
    private readonly connectors: DeploymentConnectors,
  ) {}

  readonly synced = true;

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  async resolve(model: ServedModel): Promise<ServerProxy> {
    const cached = this.proxies.get(model.deployment_id);
    if (cached) return cached;
    const deployment = await this.stores.deployments.byId(this.db, model.deployment_id);
    if (!deployment) throw deploymentGone(model);
    const proxy = this.connectors.proxyOf(deployment);
    this.proxies.set(model.deployment_id, proxy);
    return proxy;
  }
}
