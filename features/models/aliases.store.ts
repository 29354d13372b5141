import type { Runner } from '../../infra/db/database.js';
import { keysetPage, type Page, type PageOfRows } from '../../infra/db/keyset.js';
import type { PolicySnapshot } from './alias-policy.js';

/** A name of one live version of a model code in a workspace. */
export interface AliasRow {
  id: number;
  workspace_id: number;
  model_code: string;
  alias: string;
  model_id: number;
  updated_by_id: number | null;
  created_at: Date;
  updated_at: Date;
}

/** An alias with the version it points at, as read. */
export type AliasWithVersion = AliasRow & { version: string };

/** One move of an alias: set (from null), moved, deleted (to null), or its policy changed (the policy before and after). */
export interface AliasMoveRow {
  id: number;
  workspace_id: number;
  model_code: string;
  alias: string;
  from_version: string | null;
  to_version: string | null;
  actor_user_id: number | null;
  request_id: string | null;
  from_policy: PolicySnapshot | null;
  to_policy: PolicySnapshot | null;
  /** Why the platform changed it by itself (a guard's rollback); null for a person's change. */
  reason: string | null;
  created_at: Date;
}

export type NewAliasMove = Omit<AliasMoveRow, 'id' | 'created_at' | 'from_policy' | 'to_policy' | 'reason'> & Partial<Pick<AliasMoveRow, 'from_policy' | 'to_policy' | 'reason'>>;

/** Names an alias: the model code and the alias name, in a workspace. */
export interface AliasKey {
  workspaceId: number;
  modelCode: string;
  alias: string;
}

/** Every query of `model_aliases` and `model_alias_moves`; writes take the caller's transaction. */
export interface ModelAliasesStore {
  /** The alias with its version, its row locked until the transaction ends. */
  lock(tx: Runner, key: AliasKey): Promise<AliasRow | undefined>;
  /** Inserts the alias; undefined when a concurrent insert took the name first. */
  insert(tx: Runner, key: AliasKey, modelId: number, userId: number): Promise<AliasRow | undefined>;
  point(tx: Runner, id: number, modelId: number, userId: number): Promise<AliasRow>;
  remove(tx: Runner, id: number): Promise<void>;
  appendMove(tx: Runner, move: NewAliasMove): Promise<void>;
  get(db: Runner, key: AliasKey): Promise<AliasWithVersion | undefined>;
  /** A page of a model code's aliases, newest first. */
  page(db: Runner, workspaceId: number, modelCode: string, page: Page): Promise<PageOfRows<AliasWithVersion>>;
  /** A page of an alias's moves, newest first. */
  pageMoves(db: Runner, key: AliasKey, page: Page): Promise<PageOfRows<AliasMoveRow>>;
  /** The alias names pointing at each of these models. */
  namesOf(db: Runner, modelIds: number[]): Promise<Map<number, string[]>>;
}

const keyOf = (key: AliasKey) => ({ workspace_id: key.workspaceId, model_code: key.modelCode, alias: key.alias });

const withVersion = (db: Runner) => db('model_aliases').join('models as m', 'm.id', 'model_aliases.model_id').select('model_aliases.*', 'm.version');

export const modelAliasesStore: ModelAliasesStore = {
  lock: (tx, key) => tx<AliasRow>('model_aliases').where(keyOf(key)).forUpdate().first(),
  insert: async (tx, key, modelId, userId) =>
    (await tx<AliasRow>('model_aliases').insert({ ...keyOf(key), model_id: modelId, updated_by_id: userId } as never).onConflict(['workspace_id', 'model_code', 'alias']).ignore().returning('*'))[0] as
      | AliasRow
      | undefined,
  point: async (tx, id, modelId, userId) =>
    (await tx<AliasRow>('model_aliases').where({ id }).update({ model_id: modelId, updated_by_id: userId, updated_at: tx.raw('clock_timestamp()') } as never).returning('*'))[0] as AliasRow,
  remove: async (tx, id) => {
    await tx('model_aliases').where({ id }).delete();
  },
  appendMove: async (tx, move) => {
    // The time of the insert, not of the transaction's start (now()): moves that waited on the alias's lock keep their order.
    const json = (policy: PolicySnapshot | null | undefined) => (policy ? JSON.stringify(policy) : null);
    const policies = { from_policy: json(move.from_policy), to_policy: json(move.to_policy) };
    await tx('model_alias_moves').insert({ ...move, ...policies, created_at: tx.raw('clock_timestamp()') });
  },
  get: async (db, key) =>
    (await withVersion(db)
      .where({ 'model_aliases.workspace_id': key.workspaceId, 'model_aliases.model_code': key.modelCode, 'model_aliases.alias': key.alias })
      .first()) as AliasWithVersion | undefined,
  page: (db, workspaceId, modelCode, page) =>
    keysetPage<AliasWithVersion>(withVersion(db).where({ 'model_aliases.workspace_id': workspaceId, 'model_aliases.model_code': modelCode }), page, { table: 'model_aliases', idType: 'integer' }),
  pageMoves: (db, key, page) => keysetPage<AliasMoveRow>(db('model_alias_moves').where(keyOf(key)), page, { table: 'model_alias_moves', idType: 'integer' }),
  namesOf: async (db, modelIds) => {
    const names = new Map<number, string[]>();
    if (!modelIds.length) return names;
    const rows = (await db('model_aliases').whereIn('model_id', modelIds).orderBy('alias').select('model_id', 'alias')) as Array<Pick<AliasRow, 'model_id' | 'alias'>>;
    for (const row of rows) names.set(row.model_id, [...(names.get(row.model_id) ?? []), row.alias]);
    return names;
  },
};
