import type { Db, Runner } from '../../infra/db/database.js';
import type { Page } from '../../infra/db/keyset.js';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { AliasKey, AliasRow, ModelAliasesStore } from './aliases.store.js';
import { presentAlias, presentAliasMove } from './aliases.present.js';
import type { ModelRow, ModelsStore } from './store.js';

/** An alias name: lowercase letters, digits and '-', starting with a letter, 1 to 40 characters (also a CHECK of migration 0040). */
export const ALIAS_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** Who opens a session on an alias: what a traffic policy may hash to pick a version. */
export interface AliasCaller {
  sessionId: string;
  userId: number;
}

/**
 * Aliases of model codes (`production` → a version): the one owner of where
 * an alias points and of its history, each move and its history row written
 * in one transaction.
 */
export class ModelAliasesService {
  constructor(
    private readonly db: Db,
    private readonly stores: { aliases: ModelAliasesStore; models: Pick<ModelsStore, 'lockLiveByPair' | 'hasLiveCode' | 'byId'> },
  ) {}

  /** Points the alias at `version`, creating it if needed; a move to where it already points changes nothing. */
  async set(principal: Principal, code: string, alias: string, version: unknown, requestId: string | null) {
    const key = await this.knownKey(principal, code, alias);
    if (typeof version !== 'string' || !version) throw new InputError('version: required, the version the alias points at.', [{ field: 'version', message: 'required' }]);
    const row = await this.db.transaction(async (tx) => {
      const target = await this.stores.models.lockLiveByPair(tx, key.workspaceId, code, version);
      if (!target) throw new InputError(`version: ${code} has no live version ${version} in this workspace.`, [{ field: 'version', message: `no live version ${version} of ${code}` }]);
      const current = await this.locked(tx, key, target, principal.user.id);
      if (!current.created && current.row.model_id === target.id) return current.row;
      const from = current.created ? undefined : await this.stores.models.byId(tx, current.row.model_id);
      const row = current.created ? current.row : await this.stores.aliases.point(tx, current.row.id, target.id, principal.user.id);
      await this.stores.aliases.appendMove(tx, { ...moveKey(key), from_version: from?.version ?? null, to_version: version, actor_user_id: principal.user.id, request_id: requestId });
      return row;
    });
    return presentAlias({ ...row, version }, principal.workspace!.name);
  }

  async get(principal: Principal, code: string, alias: string) {
    const key = keyOf(principal, code, alias);
    const row = await this.stores.aliases.get(this.db, key);
    if (!row) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    return presentAlias(row, principal.workspace!.name);
  }

  async list(principal: Principal, code: string, page: Page) {
    const workspaceId = principal.workspace!.id;
    if (!(await this.stores.models.hasLiveCode(this.db, workspaceId, code))) throw new NotFoundError(`Model ${code} not found.`);
    const { rows, total, next } = await this.stores.aliases.page(this.db, workspaceId, code, page);
    return { items: rows.map((row) => presentAlias(row, principal.workspace!.name)), total, next };
  }

  /** Deletes the alias; sessions opened through it keep their version. */
  async remove(principal: Principal, code: string, alias: string, requestId: string | null) {
    const key = keyOf(principal, code, alias);
    await this.db.transaction(async (tx) => {
      const row = await this.stores.aliases.lock(tx, key);
      if (!row) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
      const from = await this.stores.models.byId(tx, row.model_id);
      await this.stores.aliases.remove(tx, row.id);
      await this.stores.aliases.appendMove(tx, { ...moveKey(key), from_version: from?.version ?? null, to_version: null, actor_user_id: principal.user.id, request_id: requestId });
    });
  }

  /** The alias's moves, newest first; readable after the alias is deleted, 404 when it never existed. */
  async history(principal: Principal, code: string, alias: string, page: Page) {
    const { rows, total, next } = await this.stores.aliases.pageMoves(this.db, keyOf(principal, code, alias), page);
    if (total === 0) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    return { items: rows.map(presentAliasMove), total, next };
  }

  /**
   * The live version a new session on the alias runs. Today the alias's own
   * version; a traffic policy of the alias will pick among its versions here,
   * from `caller`, so a retried open lands on the same one.
   */
  async resolve(principal: Principal, code: string, alias: string, _caller: AliasCaller): Promise<ModelRow> {
    const row = await this.stores.aliases.get(this.db, keyOf(principal, code, alias));
    const model = row && (await this.stores.models.byId(this.db, row.model_id));
    if (!model || model.deleted_at !== null) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    return model;
  }

  /** The alias names pointing at each of these models (what model listings show). */
  namesOf(modelIds: number[]): Promise<Map<number, string[]>> {
    return this.stores.aliases.namesOf(this.db, modelIds);
  }

  /** The alias row, locked; inserted when it did not exist. */
  private async locked(tx: Runner, key: AliasKey, target: ModelRow, userId: number): Promise<{ row: AliasRow; created: boolean }> {
    const found = await this.stores.aliases.lock(tx, key);
    if (found) return { row: found, created: false };
    const inserted = await this.stores.aliases.insert(tx, key, target.id, userId);
    // A concurrent set inserted it first: it is ours to move now.
    if (!inserted) return { row: (await this.stores.aliases.lock(tx, key))!, created: false };
    return { row: inserted, created: true };
  }

  /** The key of an alias in the caller's workspace, for a model code it has live versions of (else 404). */
  private async knownKey(principal: Principal, code: string, alias: string): Promise<AliasKey> {
    const key = keyOf(principal, code, alias);
    if (!(await this.stores.models.hasLiveCode(this.db, key.workspaceId, code))) throw new NotFoundError(`Model ${code} not found.`);
    return key;
  }
}

function keyOf(principal: Principal, code: string, alias: string): AliasKey {
  if (!ALIAS_NAME.test(alias)) throw new InputError(`alias: "${alias}" is not an alias name: lowercase letters, digits and '-', starting with a letter, at most 40 characters.`, [{ field: 'alias', message: 'not an alias name' }]);
  return { workspaceId: principal.workspace!.id, modelCode: code, alias };
}

const moveKey = (key: AliasKey) => ({ workspace_id: key.workspaceId, model_code: key.modelCode, alias: key.alias });
