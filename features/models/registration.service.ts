import type { Db, Runner } from '../../infra/db/database.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { FilesStore } from '../files/store.js';
import type { DeploymentRow, DeploymentsStore } from '../deployments/store.js';
import type { DeploymentConnectors } from '../deployments/connectors.js';
import { chainOf, schemasOf, type ChainLink, type ModelPayload } from './payload.js';
import { withRegistrySchemas, type CompletePayload } from './registry-schemas.js';
import type { ModelsStore } from './store.js';
import type { ModelAliasesStore } from './aliases.store.js';
import type { AliasPoliciesStore } from './alias-policies.store.js';
import { newModelRow } from './new-row.js';
import { presentChain } from './present.js';

interface Resolved {
  deployment: DeploymentRow;
  registry: Record<string, unknown>;
  /** The link's payload, its schemas filled from the registry where it gave none. */
  payload: CompletePayload;
}

/**
 * Ends, inside the deletion's transaction, the queued work of deleted models:
 * the invocations feature, above this one, writes invocation state.
 */
export type EndQueuedWork = (trx: Runner, modelIds: number[]) => Promise<unknown>;

/**
 * Compiles a tenant's schema off the event loop, its limits checked already,
 * in the workspace's turn; throws InputError naming `field` for a schema ajv refuses.
 */
export type CompileSchema = (workspaceId: number, schema: object, field: string) => Promise<void>;

/** Registration and deletion of models with their explainer chains (supervisors, private server). */
export class ModelRegistrationService {
  constructor(
    private readonly db: Db,
    private readonly stores: { models: ModelsStore; files: Pick<FilesStore, 'inWorkspace'>; deployments: Pick<DeploymentsStore, 'listLive'>; aliases: Pick<ModelAliasesStore, 'namesOf'>; policies: Pick<AliasPoliciesStore, 'aliasesTargeting'> },
    private readonly connectors: DeploymentConnectors,
    private readonly endQueuedWork: EndQueuedWork,
    private readonly compileSchema: CompileSchema,
  ) {}

  /**
   * Validates the whole chain, asks the workspace's deployments which one
   * serves each model (outside any transaction: these are network calls),
   * then writes the chain in one transaction.
   */
  async register(principal: Principal, payload: ModelPayload) {
    const workspace = principal.workspace!;
    const chain = chainOf(payload);
    const given = await this.compileAll(workspace.id, chain);
    await this.checkModelCards(workspace.id, chain);
    await this.checkAvailable(chain);
    const resolved = await this.resolveAll(workspace, chain);
    await this.compileAll(workspace.id, chain.map((link, i) => ({ ...link, payload: resolved[i]!.payload })), given);
    const rows = await this.db.transaction(async (trx) => {
      await this.checkAvailable(chain, trx);
      return this.stores.models.insertChain(trx, chain.map((link, i) => newModelRow(link, resolved[i]!.payload, resolved[i]!, workspace.id, principal.user.id)));
    });
    return [presentChain(rows, workspace.name)];
  }

  /** Soft-deletes the model and its explainers; their (model_code, version) pairs stay reserved. */
  async remove(principal: Principal, code: string, version: string) {
    const model = await this.stores.models.liveByPair(this.db, principal.workspace!.id, code, version);
    if (!model) throw new NotFoundError(`Model ${code} version ${version} not found.`);
    if (model.explains_id !== null) throw new ConflictError(`${code} ${version} is an explainer; delete the model it explains.`, 'explainer');
    const chain = [model, ...(await this.stores.models.explainersOf(this.db, model))];
    const ids = chain.map((m) => m.id);
    await this.db.transaction(async (trx) => {
      await this.stores.models.markDeleted(trx, ids);
      // After the update: an alias set concurrently holds the model's row until it commits, so it is seen here.
      const aliases = [...(await this.stores.aliases.namesOf(trx, ids)).values()].flat();
      if (aliases.length) throw new ConflictError(`${code} ${version} is what ${aliases.join(', ')} point${aliases.length === 1 ? 's' : ''} at; move or delete ${aliases.length === 1 ? 'that alias' : 'those aliases'} first.`, 'alias_in_use');
      // A version a traffic policy weights or shadows is refused the same way: a policy names only live versions.
      const targeting = await this.stores.policies.aliasesTargeting(trx, ids);
      if (targeting.length) throw new ConflictError(`${code} ${version} is named by the traffic policy of ${targeting.join(', ')}; change or delete that policy first.`, 'alias_in_use');
      await this.endQueuedWork(trx, ids);
    });
  }

  /** Compiles the chain's schemas but those of the fields in `done`; the fields compiled. */
  private async compileAll(workspaceId: number, chain: ChainLink[], done = new Set<string>()): Promise<Set<string>> {
    const compiled = new Set(done);
    for (const { payload, field } of chain) {
      for (const schema of schemasOf(payload, field)) {
        if (compiled.has(schema.field)) continue;
        await this.compileSchema(workspaceId, schema.schema, schema.field);
        compiled.add(schema.field);
      }
    }
    return compiled;
  }

  private async checkModelCards(workspaceId: number, chain: ChainLink[]) {
    for (const { payload, field } of chain) {
      if (!(await this.stores.files.inWorkspace(this.db, workspaceId, payload.model_card_file_id))) {
        throw new InputError(`${field}model_card_file_id: no file ${payload.model_card_file_id} in this workspace; upload the model card first.`);
      }
    }
  }

  private async checkAvailable(chain: ChainLink[], db = this.db) {
    const taken = await this.stores.models.takenPairs(db, chain.map(({ payload }) => [payload.model_code, payload.version]));
    if (taken.length) {
      const names = taken.map((t) => `(${t.model_code}, ${t.version})`).join(', ');
      throw new ConflictError(`${names} already registered; a model version can be registered only once, even after deletion.`);
    }
  }

  private async resolveAll(workspace: { id: number; name: string }, chain: ChainLink[]): Promise<Resolved[]> {
    const deployments = await this.stores.deployments.listLive(this.db, workspace.id);
    const resolved: Resolved[] = [];
    for (const link of chain) {
      const { payload, field } = link;
      const found = await this.resolve(deployments, workspace.name, payload.model_code, payload.version);
      if (!found) {
        throw new InputError(`${field}model_code: no deployment of this workspace knows (${payload.model_code}, ${payload.version}); register a deployment whose registry has it.`);
      }
      const complete = await withRegistrySchemas(link, this.connectors.registryOf(found.deployment, workspace.name), found.deployment.deployment_key);
      resolved.push({ ...found, payload: complete });
    }
    return resolved;
  }

  /**
   * Asks every live deployment at once; the first (oldest) whose registry knows
   * the pair serves it. When none knows it and a registry could not be asked,
   * that failure (502 naming the deployment) is the answer, not a 400.
   */
  private async resolve(deployments: DeploymentRow[], workspace: string, code: string, version: string): Promise<Omit<Resolved, 'payload'> | undefined> {
    const answers = await Promise.allSettled(deployments.map((deployment) => this.connectors.registryOf(deployment, workspace).lookup(code, version)));
    for (const [i, answer] of answers.entries()) {
      if (answer.status === 'fulfilled' && answer.value) return { deployment: deployments[i]!, registry: answer.value };
    }
    const failure = answers.find((answer): answer is PromiseRejectedResult => answer.status === 'rejected');
    if (failure) throw failure.reason;
    return undefined;
  }
}
