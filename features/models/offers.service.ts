import type { Db } from '../../infra/db/database.js';
import { ConflictError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { DeploymentConnectors } from '../deployments/connectors.js';
import type { DeploymentsStore } from '../deployments/store.js';
import type { ModelsStore } from './store.js';

/** A model a deployment's registry offers, with the versions of it the workspace has registered from that deployment. */
export interface OfferedModel {
  model_code: string;
  version: string | null;
  registered_versions: string[];
  registry: Record<string, unknown>;
}

/**
 * What a deployment's registry offers for registration (discovery): asked at
 * each request with the deployment's workspace, so a registry reading the
 * cluster lists only what is still opened to it.
 */
export class ModelOffersService {
  constructor(
    private readonly db: Db,
    private readonly stores: { models: Pick<ModelsStore, 'liveUsingDeployment'>; deployments: Pick<DeploymentsStore, 'liveByKey'> },
    private readonly connectors: DeploymentConnectors,
  ) {}

  async list(principal: Principal, deploymentKey: string): Promise<OfferedModel[]> {
    const workspace = principal.workspace!;
    const deployment = await this.stores.deployments.liveByKey(this.db, workspace.id, deploymentKey);
    if (!deployment) throw new NotFoundError(`Deployment "${deploymentKey}" not found.`);
    const registry = this.connectors.registryOf(deployment, workspace.name);
    if (!registry.offered) throw new ConflictError(`The registry of deployment "${deploymentKey}" (${deployment.registry_connector_class}) does not list its models; register them by model_code and version.`, 'not_listable');
    const offers = await registry.offered();
    const registered = await this.stores.models.liveUsingDeployment(this.db, deployment.id);
    const versionsOf = (code: string) =>
      registered
        .filter((model) => model.model_code === code)
        .map((model) => model.version)
        .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    return offers.map((offer) => ({ model_code: offer.model_code, version: offer.version, registered_versions: versionsOf(offer.model_code), registry: offer.registry }));
  }
}
