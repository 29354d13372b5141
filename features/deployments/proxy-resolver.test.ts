import { expect } from 'chai';
import type { Runner } from '../../infra/db/database.js';
import type { ServerProxy } from '../../infra/connectors/types.js';
import type { DeploymentConnectors } from './connectors.js';
import { DatabaseProxyResolver } from './proxy-resolver.js';
import type { DeploymentRow } from './store.js';

/** A deployments store of the given rows that counts its reads by id. */
function deploymentsOf(rows: Record<number, Partial<DeploymentRow>>, reads: number[]) {
  return { byId: async (_db: Runner, id: number) => (reads.push(id), rows[id] as DeploymentRow | undefined) };
}

const db = {} as Runner;

const model = (deploymentId: number) => ({ deployment_id: deploymentId, model_code: 'iris', version: '1' });

describe('the database proxy resolver (every mode without Kubernetes)', () => {
  const connectors = { proxyOf: (row: DeploymentRow) => ({ key: row.deployment_key }) as unknown as ServerProxy } as DeploymentConnectors;

  it('builds each deployment\'s proxy from its row once, and answers again from its cache', async () => {
    const reads: number[] = [];
    const resolver = new DatabaseProxyResolver(db, { deployments: deploymentsOf({ 1: { deployment_key: 'one' }, 2: { deployment_key: 'two' } }, reads) }, connectors);
    const first = await resolver.resolve(model(1));
    expect(first).to.deep.equal({ key: 'one' });
    expect(await resolver.resolve(model(1))).to.equal(first);
    expect(await resolver.resolve(model(2))).to.deep.equal({ key: 'two' });
    expect(reads).to.deep.equal([1, 2]);
    expect(resolver.synced).to.equal(true);
  });

  it('names the model whose deployment no longer exists, and looks again next time', async () => {
    const reads: number[] = [];
    const resolver = new DatabaseProxyResolver(db, { deployments: deploymentsOf({}, reads) }, connectors);
    for (let i = 0; i < 2; i++) {
      const error = await resolver.resolve(model(9)).catch((caught: Error) => caught);
      expect((error as Error).message).to.equal('The deployment of iris 1 no longer exists.');
    }
    expect(reads).to.deep.equal([9, 9]);
  });
});
