import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page } from '../../infra/db/keyset.js';
import type { IoSchema } from './payload.js';

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
  model_card_file_id: string | null;
  deployment_id: number;
  native_metadata: Record<string, unknown>;
  explains_id: number | null;
  chain_position: number;
  created_by_id: number | null;
  created_at: Date;
  deleted_at: Date | null;
}

export type NewModelRow = Omit<ModelRow, 'id' | 'created_at' | 'deleted_at' | 'explains_id'>;

const live = (db: Runner, workspaceId: number) => db<ModelRow>('models').where({ workspace_id: workspaceId }).whereNull('deleted_at');

export const modelsStore = {
  /** Pairs already registered anywhere, deleted ones included: (model_code, version) is reserved forever. */
  takenPairs: async (db: Runner, pairs: Array<[string, string]>) => {
    if (!pairs.length) return [];
    const rows = await db('models')
      .where((q) => {
        for (const [code, version] of pairs) q.orWhere({ model_code: code, version });
      })
      .select('model_code', 'version');
    return rows as Array<{ model_code: string; version: string }>;
  },
  /** Inserts the chain in order, each explainer pointing at the model it explains. */
  insertChain: async (db: Runner, rows: NewModelRow[]) => {
    const inserted: ModelRow[] = [];
    for (const row of rows) {
      const [created] = await db<ModelRow>('models')
        .insert({ ...row, explains_id: inserted.at(-1)?.id ?? null, input_schema: json(row.input_schema), output_schema: json(row.output_schema), feedback_schema: row.feedback_schema === null ? null : json(row.feedback_schema), native_metadata: json(row.native_metadata) } as never)
        .returning('*');
      inserted.push(created as ModelRow);
    }
    return inserted;
  },
  liveByPair: (db: Runner, workspaceId: number, code: string, version: string) => live(db, workspaceId).where({ model_code: code, version }).first(),
  /** A page of the workspace's live models, newest first. */
  pageLive: async (db: Runner, workspaceId: number, page: Page, filter: { modelCode?: string } = {}) => {
    const filtered = Boolean(filter.modelCode || page.createdAfter || page.createdBefore);
    // Unfiltered, the count a trigger keeps (migration 0009) spares reading every live model on each page.
    const kept = filtered ? undefined : Number((await db('model_counts').where({ workspace_id: workspaceId }).first('live'))?.live ?? 0);
    return keysetPage<ModelRow>(filter.modelCode ? live(db, workspaceId).where({ model_code: filter.modelCode }) : live(db, workspaceId), page, { table: 'models', idType: 'integer' }, kept);
  },
  /** Which of these models have a live explainer. */
  explainedAmong: async (db: Runner, workspaceId: number, ids: number[]) =>
    new Set(ids.length ? ((await live(db, workspaceId).whereIn('explains_id', ids).pluck('explains_id')) as number[]) : []),
  /** A model of the workspace, deleted or not: a (code, version) pair names one model, ever. */
  byPair: (db: Runner, workspaceId: number, code: string, version: string) =>
    db<ModelRow>('models').where({ workspace_id: workspaceId, model_code: code, version }).first(),
  /** A model by id, deleted or not. */
  byId: (db: Runner, id: number) => db<ModelRow>('models').where({ id }).first(),
  /** The live explainer of a model, if it has one: the one lookup of an explainer. */
  liveExplainerOf: (db: Runner, modelId: number) => db<ModelRow>('models').where({ explains_id: modelId }).whereNull('deleted_at').first(),
  /** The live explainer chain below a model, in order. */
  explainersOf: async (db: Runner, model: ModelRow) => {
    const chain: ModelRow[] = [];
    let current: ModelRow | undefined = model;
    while (current) {
      current = await modelsStore.liveExplainerOf(db, current.id);
      if (current) chain.push(current);
    }
    return chain;
  },
  markDeleted: (db: Runner, ids: number[]) => db('models').whereIn('id', ids).whereNull('deleted_at').update({ deleted_at: new Date() }),
};

// knex hands arrays to pg as Postgres arrays; JSON columns need explicit text.
const json = (value: unknown) => JSON.stringify(value);
