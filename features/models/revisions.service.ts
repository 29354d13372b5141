import crypto from 'node:crypto';
import type { Db } from '../../infra/db/database.js';
import type { AuditTrail } from '../audit/trail.js';
import type { DeploymentConnectors } from '../deployments/connectors.js';
import type { DeploymentsStore } from '../deployments/store.js';
import { newModelRow, SCHEMA_FIELDS } from './new-row.js';
import { schemasOf, type ChainLink, type ModelPayload } from './payload.js';
import type { CompileSchema } from './registration.service.js';
import { withRegistrySchemas } from './registry-schemas.js';
import type { ModelRow, ModelsStore } from './store.js';

/** Names the platform's own task as the actor of what it registers, in the audit trail. */
export const REVISIONS_ACTOR = 'kserve-revisions';

/** Why a copy was not registered: a link's deployment is gone or its registry does not know the new version. */
export class CopyRefused extends Error {}

const UNIQUE_VIOLATION = '23505';

/**
 * Registers a new version of a model by itself, as a copy of the model's
 * latest registration (name, description, card, feedback schema, retry
 * policy, explainer chain; schemas derived again where the registry gave
 * them), served by the same deployments. The pair's uniqueness makes a
 * second attempt, by another replica or after a restart, a no-op.
 */
export class ModelRevisionsService {
  constructor(
    private readonly db: Db,
    private readonly stores: { models: ModelsStore; deployments: Pick<DeploymentsStore, 'byId'> },
    private readonly connectors: DeploymentConnectors,
    private readonly compileSchema: CompileSchema,
    private readonly audit: Pick<AuditTrail, 'record'>,
  ) {}

  /** The live model of that code last registered through the deployment: what a copy starts from. */
  latest(deploymentId: number, code: string): Promise<ModelRow | undefined> {
    return this.stores.models.latestLiveUsingDeployment(this.db, deploymentId, code);
  }

  /** Registers `source`'s chain again as `version`; undefined when a pair of it is taken already. */
  async registerCopy(source: ModelRow, workspace: { id: number; name: string }, version: string): Promise<ModelRow[] | undefined> {
    const { models } = this.stores;
    const chain = [source, ...(await models.explainersOf(this.db, source))];
    const pairs = chain.map((row): [string, string] => [row.model_code, version]);
    if ((await models.takenPairs(this.db, pairs)).length) return undefined;
    const rows = [];
    for (const [position, row] of chain.entries()) rows.push(await this.linkOf(row, position, workspace, version));
    const inserted = await this.insert(rows);
    if (inserted) this.recordInAudit(inserted[0]!, workspace.id);
    return inserted;
  }

  /** The new row of one link: its registry asked for the new version (outside any transaction: network calls). */
  private async linkOf(row: ModelRow, position: number, workspace: { id: number; name: string }, version: string) {
    const deployment = await this.stores.deployments.byId(this.db, row.deployment_id);
    if (!deployment || deployment.deleted_at) throw new CopyRefused(`(${row.model_code}, ${row.version}) was served by a deployment since deleted`);
    if (!row.model_card_file_id) throw new CopyRefused(`(${row.model_code}, ${row.version}) has no model card any more`);
    const registry = this.connectors.registryOf(deployment, workspace.name);
    const known = await registry.lookup(row.model_code, version);
    if (!known) throw new CopyRefused(`the registry of deployment "${deployment.deployment_key}" does not know (${row.model_code}, ${version})`);
    const link: ChainLink = { payload: payloadOf(row, row.model_card_file_id, version), field: 'explainer.'.repeat(position), position };
    const complete = await withRegistrySchemas(link, registry, deployment.deployment_key);
    for (const { schema, field } of schemasOf(complete, link.field)) await this.compileSchema(workspace.id, schema, field);
    return newModelRow(link, complete, { deployment, registry: known }, workspace.id, null);
  }

  private async insert(rows: Parameters<ModelsStore['insertChain']>[1]): Promise<ModelRow[] | undefined> {
    try {
      return await this.db.transaction((trx) => this.stores.models.insertChain(trx, rows));
    } catch (error) {
      // Another replica registered it between the check and the insert.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return undefined;
      throw error;
    }
  }

  private recordInAudit(head: ModelRow, workspaceId: number): void {
    this.audit.record({
      actor_type: 'platform',
      actor_user_id: null,
      actor_id: REVISIONS_ACTOR,
      workspace_id: workspaceId,
      action: 'registerModel',
      method: 'POST',
      path: '/api/platform_model',
      resource_type: 'model',
      resource_id: `${head.model_code}/${head.version}`,
      outcome: 201,
      request_id: crypto.randomUUID(),
      trace_id: null,
      source_address: null,
    });
  }
}

/** The registration `row` came from, as `version`: its schemas left out where its registry gave them. */
function payloadOf(row: ModelRow, card: string, version: string): ModelPayload {
  const derived = new Set((row.native_metadata.derived_schemas as string[] | undefined) ?? []);
  const payload: ModelPayload = {
    model_code: row.model_code,
    version,
    name: row.name,
    description: row.description,
    realtime_execution: row.realtime_execution,
    allow_download: row.allow_download,
    need_context: row.need_context,
    ...(row.retry_policy ? { retry_policy: row.retry_policy } : {}),
    model_card_file_id: card,
    ...(row.feedback_schema ? { feedback_schema: row.feedback_schema } : {}),
  };
  for (const field of SCHEMA_FIELDS) if (!derived.has(field)) payload[field] = row[field];
  return payload;
}
