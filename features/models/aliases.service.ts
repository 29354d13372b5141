import type { Db, Runner } from '../../infra/db/database.js';
import type { Page } from '../../infra/db/keyset.js';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { AliasKey, AliasRow, ModelAliasesStore } from './aliases.store.js';
import { presentAlias, presentAliasMove, presentPolicy, snapshotOf } from './aliases.present.js';
import type { AliasPoliciesStore, PolicyTargetRow } from './alias-policies.store.js';
import { pickTarget, policyAfterMove, policyInput, type PolicySnapshot } from './alias-policy.js';
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
    private readonly stores: { aliases: ModelAliasesStore; policies: AliasPoliciesStore; models: Pick<ModelsStore, 'lockLiveByPair' | 'hasLiveCode' | 'byId'> },
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
      const policies = from ? await this.movePolicy(tx, row.id, from.version, target, principal.user.id) : {};
      await this.stores.aliases.appendMove(tx, { ...moveKey(key), from_version: from?.version ?? null, to_version: version, actor_user_id: principal.user.id, request_id: requestId, ...policies });
      return row;
    });
    return presentAlias({ ...row, version }, principal.workspace!.name, await this.stores.policies.of(this.db, row.id));
  }

  /**
   * Sets the alias's traffic policy in place of the one it had: the versions
   * are live versions of the alias's model code, the alias's own version among
   * the weighted ones; the change is a row of the alias's history.
   */
  async setPolicy(principal: Principal, code: string, alias: string, body: unknown, requestId: string | null) {
    const key = keyOf(principal, code, alias);
    // Another workspace's alias (or none) is a 404 before the versions are looked at: they are not this workspace's.
    if (!(await this.stores.aliases.get(this.db, key))) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    const asked = policyInput(body);
    const stored = await this.db.transaction(async (tx) => {
      // The versions before the alias, in the order a move takes its locks.
      const ids = await this.lockVersions(tx, key, asked);
      const row = await this.stores.aliases.lock(tx, key);
      if (!row) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
      const primary = asked.weights.find((w) => ids.get(w.version) === row.model_id);
      if (!primary) throw new InputError(`weights: the alias's own version is its primary target and must be weighted.`, [{ field: 'weights', message: "must weight the alias's version" }]);
      const ordered: PolicySnapshot = { ...asked, weights: [primary, ...asked.weights.filter((w) => w !== primary)] };
      const version = primary.version;
      const before = await this.stores.policies.of(tx, row.id);
      const from = before ? snapshotOf(before, version) : null;
      const to = snapshotOf(await this.writePolicy(tx, row.id, ordered, ids, principal.user.id), version);
      if (JSON.stringify(from) !== JSON.stringify(to)) {
        await this.stores.aliases.appendMove(tx, { ...moveKey(key), from_version: version, to_version: version, actor_user_id: principal.user.id, request_id: requestId, from_policy: from, to_policy: to });
      }
      return { policy: (await this.stores.policies.of(tx, row.id))!, version };
    });
    return presentPolicy(stored.policy, stored.version);
  }

  async getPolicy(principal: Principal, code: string, alias: string) {
    const row = await this.stores.aliases.get(this.db, keyOf(principal, code, alias));
    const policy = row && (await this.stores.policies.of(this.db, row.id));
    if (!row || !policy) throw new NotFoundError(`Alias ${alias} of ${code} has no traffic policy.`);
    return presentPolicy(policy, row.version);
  }

  /** Deletes the alias's policy: every new session runs the alias's version again. */
  async removePolicy(principal: Principal, code: string, alias: string, requestId: string | null) {
    const key = keyOf(principal, code, alias);
    await this.db.transaction(async (tx) => {
      const row = await this.stores.aliases.lock(tx, key);
      const policy = row && (await this.stores.policies.of(tx, row.id));
      if (!row || !policy) throw new NotFoundError(`Alias ${alias} of ${code} has no traffic policy.`);
      const version = (await this.stores.models.byId(tx, row.model_id))!.version;
      await this.stores.policies.remove(tx, row.id);
      await this.stores.aliases.appendMove(tx, { ...moveKey(key), from_version: version, to_version: version, actor_user_id: principal.user.id, request_id: requestId, from_policy: snapshotOf(policy, version) });
    });
  }

  async get(principal: Principal, code: string, alias: string) {
    const key = keyOf(principal, code, alias);
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
    const key = keyOf(principal, code, alias);
    await this.db.transaction(async (tx) => {
      const row = await this.stores.aliases.lock(tx, key);
      if (!row) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
      const from = await this.stores.models.byId(tx, row.model_id);
      const policy = await this.stores.policies.of(tx, row.id);
      // Its policy goes with it (on delete cascade); the history keeps what it was.
      await this.stores.aliases.remove(tx, row.id);
      const fromPolicy = policy && from ? snapshotOf(policy, from.version) : null;
      await this.stores.aliases.appendMove(tx, { ...moveKey(key), from_version: from?.version ?? null, to_version: null, actor_user_id: principal.user.id, request_id: requestId, from_policy: fromPolicy });
    });
  }

  /** The alias's moves, newest first; readable after the alias is deleted, 404 when it never existed. */
  async history(principal: Principal, code: string, alias: string, page: Page) {
    const { rows, total, next } = await this.stores.aliases.pageMoves(this.db, keyOf(principal, code, alias), page);
    if (total === 0) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    return { items: rows.map(presentAliasMove), total, next };
  }

  /**
   * The live version a new session on the alias runs: the alias's own version,
   * or with a traffic policy the weighted version the hash of the caller's
   * session (or user) picks, so the same session or user always lands on the same one.
   */
  async resolve(principal: Principal, code: string, alias: string, caller: AliasCaller): Promise<ModelRow> {
    const route = await this.stores.policies.route(this.db, keyOf(principal, code, alias));
    const chosen = route && (route.policy ? pickTarget(route.aliasId, stickyKey(route.policy.sticky, caller), [{ modelId: route.modelId, weight: route.policy.primaryWeight }, ...route.policy.weighted]) : route.modelId);
    const model = chosen === undefined ? undefined : await this.stores.models.byId(this.db, chosen);
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

  /** Share-locks each version the policy names (a live version of the alias's model code, else a 400 naming it); their ids by version. */
  private async lockVersions(tx: Runner, key: AliasKey, policy: PolicySnapshot): Promise<Map<string, number>> {
    const ids = new Map<string, number>();
    const named = [...policy.weights.map((w, i) => [w.version, `weights[${i}].version`] as const), ...policy.shadows.map((v, i) => [v, `shadows[${i}]`] as const)];
    for (const [version, field] of named) {
      const model = await this.stores.models.lockLiveByPair(tx, key.workspaceId, key.modelCode, version);
      if (!model) throw new InputError(`${field}: ${key.modelCode} has no live version ${version} in this workspace.`, [{ field, message: `no live version ${version} of ${key.modelCode}` }]);
      ids.set(version, model.id);
    }
    return ids;
  }

  /** Writes the policy (its first weight the primary's) and reads it back. */
  private async writePolicy(tx: Runner, aliasId: number, policy: PolicySnapshot, ids: Map<string, number>, userId: number) {
    const [primary, ...others] = policy.weights;
    const targets: PolicyTargetRow[] = [
      ...others.map((w) => ({ model_id: ids.get(w.version)!, role: 'weighted' as const, weight: w.weight })),
      ...policy.shadows.map((v) => ({ model_id: ids.get(v)!, role: 'shadow' as const, weight: null })),
    ];
    await this.stores.policies.replace(tx, { alias_id: aliasId, sticky: policy.sticky, primary_weight: primary!.weight, updated_by_id: userId }, targets);
    return (await this.stores.policies.of(tx, aliasId))!;
  }

  /** Carries the alias's policy, if any, over a move from `from` to `target` (policyAfterMove); the policy before and after, for the history. */
  private async movePolicy(tx: Runner, aliasId: number, from: string, target: ModelRow, userId: number): Promise<{ from_policy?: PolicySnapshot; to_policy?: PolicySnapshot }> {
    const policy = await this.stores.policies.of(tx, aliasId);
    if (!policy) return {};
    const before = snapshotOf(policy, from);
    const after = policyAfterMove(before, target.version);
    const ids = new Map([...policy.targets.map((t) => [t.version, t.model_id] as const), [target.version, target.id] as const]);
    await this.writePolicy(tx, aliasId, after, ids, userId);
    return { from_policy: before, to_policy: after };
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

const stickyKey = (sticky: PolicySnapshot['sticky'], caller: AliasCaller) => (sticky === 'user' ? `user:${caller.userId}` : `session:${caller.sessionId}`);

const moveKey = (key: AliasKey) => ({ workspace_id: key.workspaceId, model_code: key.modelCode, alias: key.alias });
