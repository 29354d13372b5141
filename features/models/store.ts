import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import type { IoSchema } from './payload.js';
import type { RetryPolicy } from './retry-policy.js';

export interface ModelRow {
  id: number;
  workspace_id: number;
  model_code: string;
  version: string;
  name: string;
  description: string;
  input_schema: IoSchema;
  output_schema: IoSchema;
  feedback_schema: Record<string, unknown> | null;
  realtime_execution: boolean;
  allow_download: boolean;
  need_context: boolean;
  /** Null for models registered before retry policies existed: they follow the default. */
  retry_policy: RetryPolicy | null;
  model_card_file_id: string | null;
  deployment_id: number;
  native_metadata: Record<string, unknown>;
  explains_id: number | null;
  chain_position: number;
  created_by_id: number | null;
  created_at: Date;
  deleted_at: Date | null;
}

/** A live model version of a live workspace, by workspace name: a gauge of the private server's scrape. */
export interface LiveModel {
  workspace: string;
  model_code: string;
  model_version: string;
}

export type NewModelRow = Omit<ModelRow, 'id' | 'created_at' | 'deleted_at' | 'explains_id'>;

const live = (db: Runner, workspaceId: number) => db<ModelRow>('models').where({ workspace_id: workspaceId }).whereNull('deleted_at');

/** Every query of `models` and of the counts a trigger keeps of them (`model_counts`). */
export interface ModelsStore {
  /** Pairs already registered anywhere, deleted ones included: (model_code, version) is reserved forever. */
  takenPairs(db: Runner, pairs: Array<[string, string]>): Promise<Array<{ model_code: string; version: string }>>;
  /** Inserts the chain in order, each explainer pointing at the model it explains. */
  insertChain(db: Runner, rows: NewModelRow[]): Promise<ModelRow[]>;
  liveByPair(db: Runner, workspaceId: number, code: string, version: string): Promise<ModelRow | undefined>;
  /** As liveByPair, the row share-locked until the transaction ends: no delete commits under it. */
  lockLiveByPair(tx: Runner, workspaceId: number, code: string, version: string): Promise<ModelRow | undefined>;
  /** Whether the workspace has a live version of this model code. */
  hasLiveCode(db: Runner, workspaceId: number, code: string): Promise<boolean>;
  /** A page of the workspace's live models, newest first. */
  pageLive(db: Runner, workspaceId: number, page: Page, filter?: { modelCode?: string }): Promise<PageOfRows<ModelRow>>;
  /** Which of these models have a live explainer. */
  explainedAmong(db: Runner, workspaceId: number, ids: number[]): Promise<Set<number>>;
  /** A model of the workspace, deleted or not: a (code, version) pair names one model, ever. */
  byPair(db: Runner, workspaceId: number, code: string, version: string): Promise<ModelRow | undefined>;
  /** A model by id, deleted or not. */
  byId(db: Runner, id: number): Promise<ModelRow | undefined>;
  /** The live explainer of a model, if it has one: the one lookup of an explainer. */
  liveExplainerOf(db: Runner, modelId: number): Promise<ModelRow | undefined>;
  /** The live explainer chain below a model, in order. */
  explainersOf(db: Runner, model: ModelRow): Promise<ModelRow[]>;
  /** Every explainer registered below a model, in chain order, deleted ones included: what its sessions hold. */
  registeredExplainersOf(db: Runner, model: ModelRow): Promise<ModelRow[]>;
  markDeleted(db: Runner, ids: number[]): Promise<number>;
  liveUsingDeployment(db: Runner, deploymentId: number): Promise<Array<Pick<ModelRow, 'model_code' | 'version'>>>;
  /** The live model (not an explainer) of that code last registered through the deployment. */
  latestLiveUsingDeployment(db: Runner, deploymentId: number, code: string): Promise<ModelRow | undefined>;
  /** Every live model version of every live workspace. */
  liveEverywhere(db: Runner): Promise<LiveModel[]>;
}

export const modelsStore: ModelsStore = {
  takenPairs: async (db, pairs) => {
    if (!pairs.length) return [];
    const rows = await db('models')
      .where((q) => {
        for (const [code, version] of pairs) q.orWhere({ model_code: code, version });
      })
      .select('model_code', 'version');
    return rows as Array<{ model_code: string; version: string }>;
  },
  insertChain: async (db, rows) => {
    const inserted: ModelRow[] = [];
    for (const row of rows) {
      const [created] = await db<ModelRow>('models')
        .insert({ ...row, explains_id: inserted.at(-1)?.id ?? null, input_schema: json(row.input_schema), output_schema: json(row.output_schema), feedback_schema: row.feedback_schema === null ? null : json(row.feedback_schema), native_metadata: json(row.native_metadata), retry_policy: row.retry_policy === null ? null : json(row.retry_policy) } as never)
        .returning('*');
      inserted.push(created as ModelRow);
    }
    return inserted;
  },
  liveByPair: (db, workspaceId, code, version) => live(db, workspaceId).where({ model_code: code, version }).first(),
  lockLiveByPair: (tx, workspaceId, code, version) => live(tx, workspaceId).where({ model_code: code, version }).forShare().first(),
  hasLiveCode: async (db, workspaceId, code) => (await live(db, workspaceId).where({ model_code: code }).first('id')) !== undefined,
  pageLive: async (db, workspaceId, page, filter = {}) => {
    const filtered = Boolean(filter.modelCode || page.createdAfter || page.createdBefore);
    // Unfiltered, the count a trigger keeps (migration 0009) spares reading every live model on each page.
    const kept = filtered ? undefined : Number((await db('model_counts').where({ workspace_id: workspaceId }).first('live'))?.live ?? 0);
    return keysetPage<ModelRow>(filter.modelCode ? live(db, workspaceId).where({ model_code: filter.modelCode }) : live(db, workspaceId), page, { table: 'models', idType: 'integer' }, kept);
  },
  explainedAmong: async (db, workspaceId, ids) =>
    new Set(ids.length ? ((await live(db, workspaceId).whereIn('explains_id', ids).pluck('explains_id')) as number[]) : []),
  byPair: (db, workspaceId, code, version) => db<ModelRow>('models').where({ workspace_id: workspaceId, model_code: code, version }).first(),
  byId: (db, id) => db<ModelRow>('models').where({ id }).first(),
  liveExplainerOf: (db, modelId) => db<ModelRow>('models').where({ explains_id: modelId }).whereNull('deleted_at').first(),
  explainersOf: async (db, model) => {
    const chain: ModelRow[] = [];
    let current: ModelRow | undefined = model;
    while (current) {
      current = await modelsStore.liveExplainerOf(db, current.id);
      if (current) chain.push(current);
    }
    return chain;
  },
  registeredExplainersOf: async (db, model) => {
    const chain: ModelRow[] = [];
    let current: ModelRow | undefined = model;
    while (current) {
      current = await db<ModelRow>('models').where({ explains_id: current.id }).first();
      if (current) chain.push(current);
    }
    return chain;
  },
  markDeleted: (db, ids) => db('models').whereIn('id', ids).whereNull('deleted_at').update({ deleted_at: new Date() }),
  liveUsingDeployment: (db, deploymentId) => db<ModelRow>('models').where({ deployment_id: deploymentId }).whereNull('deleted_at').select('model_code', 'version'),
  latestLiveUsingDeployment: (db, deploymentId, code) => db<ModelRow>('models').where({ deployment_id: deploymentId, model_code: code }).whereNull('deleted_at').whereNull('explains_id').orderBy('id', 'desc').first(),
  liveEverywhere: async (db) =>
    (await db('models as m')
      .join('workspaces as w', 'w.id', 'm.workspace_id')
      .whereNull('w.deleted_at')
      .whereNull('m.deleted_at')
      .select('w.name as workspace', 'm.model_code', 'm.version as model_version')) as LiveModel[],
};

// knex hands arrays to pg as Postgres arrays; JSON columns need explicit text.
const json = (value: unknown) => JSON.stringify(value);
