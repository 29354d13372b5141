import { expect } from 'chai';
import type { Db, Runner } from '../../infra/db/database.js';
import type { RegistryConnector } from '../../infra/connectors/types.js';
import type { AuditEntry } from '../audit/trail.js';
import type { DeploymentConnectors } from '../deployments/connectors.js';
import type { DeploymentRow } from '../deployments/store.js';
import type { IoSchema } from './payload.js';
import { CopyRefused, ModelRevisionsService } from './revisions.service.js';
import type { ModelRow, ModelsStore, NewModelRow } from './store.js';

const given: IoSchema = { type: 'json', description: 'given' };
const derived = (revision: string): IoSchema => ({ type: 'json', description: `derived for ${revision}` });
const deployment = { id: 3, deployment_key: 'kserve', deleted_at: null } as DeploymentRow;

function row(over: Partial<ModelRow>): ModelRow {
  return {
    id: 1,
    workspace_id: 7,
    model_code: 'iris',
    version: '1',
    name: 'Iris',
    description: 'A model',
    input_schema: derived('1'),
    output_schema: given,
    feedback_schema: { type: 'object' },
    realtime_execution: true,
    allow_download: false,
    need_context: false,
    retry_policy: { max_attempts: 3, backoff_multiplier: 1, retry_on: ['unreachable'] },
    model_card_file_id: 'card',
    deployment_id: 3,
    native_metadata: { deployment_key: 'kserve', registry: { latest_ready_revision: 'r1' }, derived_schemas: ['input_schema'] },
    explains_id: null,
    chain_position: 0,
    created_by_id: 5,
    created_at: new Date(),
    deleted_at: null,
    ...over,
  };
}

/** The service over stores and a registry of the test's own, recording what it inserts and audits. */
function subject(options: { taken?: boolean; knows?: boolean; insertFails?: string } = {}) {
  const inserted: NewModelRow[][] = [];
  const audited: AuditEntry[] = [];
  const explainer = row({ id: 2, model_code: 'iris.explainer', input_schema: given, explains_id: 1, chain_position: 1, native_metadata: { registry: {} } });
  const models = {
    explainersOf: async () => [explainer],
    takenPairs: async () => (options.taken ? [{ model_code: 'iris', version: 'r2' }] : []),
    insertChain: async (_db: Runner, rows: NewModelRow[]) => {
      if (options.insertFails) throw Object.assign(new Error('insert failed'), { code: options.insertFails });
      inserted.push(rows);
      return rows.map((r, i) => ({ ...r, id: 10 + i }) as ModelRow);
    },
  } as unknown as ModelsStore;
  const registry: RegistryConnector = {
    lookup: async (code, version) => (options.knows === false ? null : { name: code, latest_ready_revision: version }),
    schemasOf: async (_code, version) => ({ input: derived(version), output: derived(version) }),
  } as RegistryConnector;
  const service = new ModelRevisionsService(
    { transaction: (work: (trx: Runner) => unknown) => work({} as Runner) } as unknown as Db,
    { models, deployments: { byId: async () => deployment } },
    { registryOf: () => registry } as unknown as DeploymentConnectors,
    async () => undefined,
    { record: (entry) => void audited.push(entry) },
  );
  return { service, inserted, audited };
}

describe('registering a model again as a new version', () => {
  it('copies the chain, derives again only the schemas the registry gave, and audits it as the platform', async () => {
    const { service, inserted, audited } = subject();
    const chain = await service.registerCopy(row({}), { id: 7, name: 'team-a' }, 'r2');
    expect(chain).to.have.length(2);
    const [head, explains] = inserted[0]!;
    expect(head).to.deep.include({ model_code: 'iris', version: 'r2', name: 'Iris', description: 'A model', realtime_execution: true, model_card_file_id: 'card', created_by_id: null, deployment_id: 3 });
    expect(head!.input_schema).to.deep.equal(derived('r2'));
    expect(head!.output_schema).to.deep.equal(given);
    expect(head!.feedback_schema).to.deep.equal({ type: 'object' });
    expect(head!.retry_policy).to.deep.equal({ max_attempts: 3, backoff_multiplier: 1, retry_on: ['unreachable'] });
    expect(head!.native_metadata).to.deep.equal({ deployment_key: 'kserve', registry: { name: 'iris', latest_ready_revision: 'r2' }, derived_schemas: ['input_schema'] });
    expect(explains).to.deep.include({ model_code: 'iris.explainer', version: 'r2', chain_position: 1 });
    expect(explains!.input_schema).to.deep.equal(given);
    expect(audited).to.have.length(1);
    expect(audited[0]).to.deep.include({ actor_type: 'platform', actor_user_id: null, workspace_id: 7, action: 'registerModel', resource_type: 'model', resource_id: 'iris/r2', outcome: 201 });
  });

  it('does nothing when the pair is taken, before or during the insert (another replica)', async () => {
    const before = subject({ taken: true });
    expect(await before.service.registerCopy(row({}), { id: 7, name: 'team-a' }, 'r2')).to.equal(undefined);
    const during = subject({ insertFails: '23505' });
    expect(await during.service.registerCopy(row({}), { id: 7, name: 'team-a' }, 'r2')).to.equal(undefined);
    expect([...before.audited, ...during.audited]).to.deep.equal([]);
  });

  it('refuses a copy its registry does not know, and lets other insert failures through', async () => {
    const unknown = subject({ knows: false });
    const refused = await unknown.service.registerCopy(row({}), { id: 7, name: 'team-a' }, 'r2').catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(CopyRefused);
    const failing = subject({ insertFails: '08006' });
    const failed = await failing.service.registerCopy(row({}), { id: 7, name: 'team-a' }, 'r2').catch((error: unknown) => error);
    expect((failed as Error).message).to.equal('insert failed');
  });
});
