import { expect } from 'chai';
import type { Db } from '../../infra/db/database.js';
import type { RegistryConnector, RegistryOffer } from '../../infra/connectors/types.js';
import { ConflictError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { DeploymentConnectors } from '../deployments/connectors.js';
import type { DeploymentRow } from '../deployments/store.js';
import { ModelOffersService } from './offers.service.js';

const principal = { user: { id: 1 }, workspace: { id: 7, name: 'team-a' } } as Principal;
const deployment = { id: 3, workspace_id: 7, deployment_key: 'kserve', registry_connector_class: 'didyma.registry.KServeRegistryConnector' } as DeploymentRow;
const offer = (model_code: string): RegistryOffer => ({ model_code, version: null, registry: { name: model_code } });

/** The service over stores and a registry of the test's own: what it adds is the workspace's lookup and the registered versions. */
function service(registry: RegistryConnector, asked: Array<string | undefined> = []) {
  const connectors = { registryOf: (_row: DeploymentRow, workspace?: string) => (asked.push(workspace), registry) } as unknown as DeploymentConnectors;
  const registered = [
    { model_code: 'iris', version: '10' },
    { model_code: 'iris', version: '2' },
    { model_code: 'iris.explainer', version: '2' },
  ];
  return new ModelOffersService(
    {} as Db,
    {
      deployments: { liveByKey: async (_db, workspaceId, key) => (workspaceId === 7 && key === 'kserve' ? deployment : undefined) },
      models: { liveUsingDeployment: async (_db, id) => (id === deployment.id ? registered : []) },
    },
    connectors,
  );
}

describe('models a deployment offers', () => {
  const listing: RegistryConnector = { lookup: async () => null, health: async () => undefined, offered: async () => [offer('iris'), offer('iris.explainer'), offer('setosa')] };

  it('gives each offer the versions registered from the deployment, in natural order, asking the registry as the workspace', async () => {
    const asked: Array<string | undefined> = [];
    const offers = await service(listing, asked).list(principal, 'kserve');
    expect(offers.map((o) => [o.model_code, o.registered_versions])).to.deep.equal([
      ['iris', ['2', '10']],
      ['iris.explainer', ['2']],
      ['setosa', []],
    ]);
    expect(asked).to.deep.equal(['team-a']);
  });

  it("answers 404 for a deployment not the workspace's, and 409 for a registry that does not list", async () => {
    const other = { ...principal, workspace: { id: 8, name: 'team-b' } };
    expect(await service(listing).list(other, 'kserve').catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
    const unlisted = await service({ lookup: async () => null, health: async () => undefined }).list(principal, 'kserve').catch((e: unknown) => e);
    expect(unlisted).to.be.instanceOf(ConflictError);
    expect(unlisted).to.include({ code: 'not_listable' });
  });
});
