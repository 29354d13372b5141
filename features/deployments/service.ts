import type { Db, Runner } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { Page } from '../../infra/db/keyset.js';
import type { ConnectorCatalog } from '../../infra/connectors/registry.js';
import { maskedInit, sealedKeys, sealSecrets, splitSecrets } from './secrets.js';
import type { DeploymentRow, DeploymentsStore } from './store.js';
import { announceCommitted } from '../../infra/db/change-feed.js';
import { clusterStatus } from './cluster-state.js';

export interface DeploymentInput {
  deployment_key: string;
  registry_connector_class: string;
  registry_connector_init: unknown;
  server_proxy_class: string;
  server_proxy_init: unknown;
  max_concurrent_calls?: number | null;
}

/** The database's check constraint, said first in words a caller can act on. */
function checkedMaxConcurrentCalls(value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 1 || value > 2147483647) throw new InputError('max_concurrent_calls: a whole number of at least 1, or null for no limit.', [{ field: 'max_concurrent_calls', message: 'a whole number of at least 1, or null' }]);
  return value;
}

/**
 * Deployments of a workspace: a registry connector plus a server proxy. Keys
 * are never reused. Requests change rows only; in Kubernetes mode the
 * reconciler (platform/kube/resync.ts), woken by the announcement after each
 * commit, applies them to the cluster and records how far it got.
 */
export class DeploymentsService {
  constructor(
    private readonly db: Db,
    private readonly stores: { deployments: DeploymentsStore },
    private readonly catalog: ConnectorCatalog,
    private readonly box: SecretBox,
    /** The live models a deployment serves (the models feature's store: models sit above deployments). */
    private readonly liveModelsServed: (db: Runner, deploymentId: number) => Promise<Array<{ model_code: string; version: string }>>,
    /** Kubernetes mode: responses show each deployment's `cluster_state`. */
    private readonly clusterManaged = false,
  ) {}

  async create(principal: Principal, input: DeploymentInput) {
    const workspace = principal.workspace!;
    const registry = this.catalog.validate('registry', input.registry_connector_class, input.registry_connector_init, workspace.name);
    const proxy = this.catalog.validate('proxy', input.server_proxy_class, input.server_proxy_init, workspace.name);
    const registryParts = splitSecrets(registry.init, this.catalog.secretKeys(registry.className));
    const proxyParts = splitSecrets(proxy.init, this.catalog.secretKeys(proxy.className));
    const row = await this.db.transaction(async (trx) => {
      if (await this.stores.deployments.keyTaken(trx, input.deployment_key)) {
        throw new ConflictError(`The deployment_key "${input.deployment_key}" is taken (keys are never reused).`);
      }
      const created = await this.stores.deployments.insert(trx, {
        workspace_id: workspace.id,
        deployment_key: input.deployment_key,
        registry_connector_class: registry.className,
        registry_connector_init: registryParts.plain,
        server_proxy_class: proxy.className,
        server_proxy_init: proxyParts.plain,
        secrets_sealed: sealSecrets(this.box, { ...registryParts.secrets, ...proxyParts.secrets }),
        max_concurrent_calls: checkedMaxConcurrentCalls(input.max_concurrent_calls),
        created_by_id: principal.user.id,
      });
      announceCommitted(trx, 'deployments', [String(created.id)]);
      return created;
    });
    return this.present(row, workspace.name);
  }

  async list(principal: Principal, page: Page) {
    const workspace = principal.workspace!;
    const { rows, total, next } = await this.stores.deployments.pageLive(this.db, workspace.id, page);
    return { items: rows.map((row) => this.present(row, workspace.name)), total, next };
  }

  async get(principal: Principal, key: string) {
    return this.present(await this.live(principal, key), principal.workspace!.name);
  }

  /** Executors obey the new limit at their next claim; calls already running finish. */
  async setMaxConcurrentCalls(principal: Principal, key: string, value: number | null) {
    const row = await this.live(principal, key);
    const updated = await this.stores.deployments.setMaxConcurrentCalls(this.db, row.id, checkedMaxConcurrentCalls(value));
    if (!updated) throw new NotFoundError(`Deployment "${key}" not found.`);
    return this.present(updated, principal.workspace!.name);
  }

  /** Soft delete; refused while live models are served by it. */
  async remove(principal: Principal, key: string) {
    const row = await this.live(principal, key);
    const users = await this.liveModelsServed(this.db, row.id);
    if (users.length) {
      throw new ConflictError(`Deployment "${key}" serves ${users.map((m) => `${m.model_code} ${m.version}`).join(', ')}; delete those models first.`, 'in_use');
    }
    await this.stores.deployments.markDeleted(this.db, row.id);
    announceCommitted(this.db, 'deployments', [String(row.id)]);
  }

  private async live(principal: Principal, key: string): Promise<DeploymentRow> {
    const row = await this.stores.deployments.liveByKey(this.db, principal.workspace!.id, key);
    if (!row) throw new NotFoundError(`Deployment "${key}" not found.`);
    return row;
  }

  private present(row: DeploymentRow, workspace: string) {
    const configured = sealedKeys(this.box, row.secrets_sealed);
    const secretsOf = (className: string) => configured.filter((key) => this.catalog.secretKeys(className).includes(key));
    return {
      deployment_key: row.deployment_key,
      registry_connector_class: row.registry_connector_class,
      registry_connector_init: maskedInit(row.registry_connector_init, secretsOf(row.registry_connector_class)),
      server_proxy_class: row.server_proxy_class,
      server_proxy_init: maskedInit(row.server_proxy_init, secretsOf(row.server_proxy_class)),
      max_concurrent_calls: row.max_concurrent_calls,
      workspace,
      ...(this.clusterManaged ? clusterStatus(row) : {}),
    };
  }
}
