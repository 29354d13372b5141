import type { Db, Runner } from '../../infra/db/database.js';
import type { Page } from '../../infra/db/keyset.js';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import { aliasKeyOf, moveKeyOf } from './alias-key.js';
import type { AliasPoliciesService } from './alias-policies.service.js';
import type { Principal } from '../auth/principal.js';
import type { AliasKey, AliasRow, ModelAliasesStore } from './aliases.store.js';
import { presentAlias, presentAliasMove, snapshotOf } from './aliases.present.js';
import type { AliasPoliciesStore } from './alias-policies.store.js';
import { pickTarget, type Sticky } from './alias-policy.js';
import type { ModelRow, ModelsStore } from './store.js';

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
    private readonly stores: { aliases: ModelAliasesStore; policies: AliasPoliciesStore; models: Pick<ModelsStore, 'lockLiveByPair' | 'hasLiveCode' | 'byId'> },
    private readonly policies: Pick<AliasPoliciesService, 'carryOver'>,
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
      const policies = from ? await this.policies.carryOver(tx, row.id, from.version, target, principal.user.id) : {};
      await this.stores.aliases.appendMove(tx, { ...moveKeyOf(key), from_version: from?.version ?? null, to_version: version, actor_user_id: principal.user.id, request_id: requestId, ...policies });
      return row;
    });
    return presentAlias({ ...row, version }, principal.workspace!.name, await this.stores.policies.of(this.db, row.id));
  }

  async get(principal: Principal, code: string, alias: string) {
    const key = aliasKeyOf(principal, code, alias);
    const row = await this.stores.aliases.get(this.db, key);
    if (!row) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    return presentAlias(row, principal.workspace!.name, await this.stores.policies.of(this.db, row.id));
  }

  async list(principal: Principal, code: string, page: Page) {
    const workspaceId = principal.workspace!.id;
    if (!(await this.stores.models.hasLiveCode(this.db, workspaceId, code))) throw new NotFoundError(`Model ${code} not found.`);
    const { rows, total, next } = await this.stores.aliases.page(this.db, workspaceId, code, page);
    const policies = await this.stores.policies.ofAliases(this.db, rows.map((row) => row.id));
    return { items: rows.map((row) => presentAlias(row, principal.workspace!.name, policies.get(row.id))), total, next };
  }

  /** Deletes the alias; sessions opened through it keep their version. */
  async remove(principal: Principal, code: string, alias: string, requestId: string | null) {
    const key = aliasKeyOf(principal, code, alias);
    await this.db.transaction(async (tx) => {
      const row = await this.stores.aliases.lock(tx, key);
      if (!row) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
      const from = await this.stores.models.byId(tx, row.model_id);
      const policy = await this.stores.policies.of(tx, row.id);
      // Its policy goes with it (on delete cascade); the history keeps what it was.
      await this.stores.aliases.remove(tx, row.id);
      const fromPolicy = policy && from ? snapshotOf(policy, from.version) : null;
      await this.stores.aliases.appendMove(tx, { ...moveKeyOf(key), from_version: from?.version ?? null, to_version: null, actor_user_id: principal.user.id, request_id: requestId, from_policy: fromPolicy });
    });
  }

  /** The alias's moves, newest first; readable after the alias is deleted, 404 when it never existed. */
  async history(principal: Principal, code: string, alias: string, page: Page) {
    const { rows, total, next } = await this.stores.aliases.pageMoves(this.db, aliasKeyOf(principal, code, alias), page);
    if (total === 0) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    return { items: rows.map(presentAliasMove), total, next };
  }

  /**
   * The live version a new session on the alias runs: the alias's own version,
   * or with a traffic policy the weighted version the hash of the caller's
   * session (or user) picks, so the same session or user always lands on the same one.
   */
  async resolve(principal: Principal, code: string, alias: string, caller: AliasCaller): Promise<ModelRow> {
    const route = await this.stores.policies.route(this.db, aliasKeyOf(principal, code, alias));
    const chosen = route && (route.policy ? pickTarget(route.aliasId, stickyKey(route.policy.sticky, caller), [{ modelId: route.modelId, weight: route.policy.primaryWeight }, ...route.policy.weighted]) : route.modelId);
    const model = chosen === undefined ? undefined : await this.stores.models.byId(this.db, chosen);
    if (!model || model.deleted_at !== null) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    return model;
  }

  /** The live shadow versions of the alias's traffic policy (model ids): where its sessions' predictions are copied. */
  shadowsOf(principal: Principal, code: string, alias: string): Promise<number[]> {
    return this.stores.policies.shadows(this.db, aliasKeyOf(principal, code, alias));
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
    const key = aliasKeyOf(principal, code, alias);
    if (!(await this.stores.models.hasLiveCode(this.db, key.workspaceId, code))) throw new NotFoundError(`Model ${code} not found.`);
    return key;
  }
}


const stickyKey = (sticky: Sticky, caller: AliasCaller) => (sticky === 'user' ? `user:${caller.userId}` : `session:${caller.sessionId}`);
