import type { Db, Runner } from '../../infra/db/database.js';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import { aliasKeyOf, moveKeyOf } from './alias-key.js';
import type { AliasPoliciesStore, PolicyTargetRow } from './alias-policies.store.js';
import { policyAfterMove, policyInput, type PolicySnapshot } from './alias-policy.js';
import { checkFeedbackGuards } from './alias-guards.js';
import { presentPolicy, snapshotOf } from './aliases.present.js';
import type { AliasKey, ModelAliasesStore } from './aliases.store.js';
import type { ModelRow, ModelsStore } from './store.js';

/**
 * Traffic policies of aliases: the one owner of which versions an alias's new
 * sessions are split among, each change and its history row written in one
 * transaction under the alias's lock.
 */
export class AliasPoliciesService {
  constructor(
    private readonly db: Db,
    private readonly stores: { aliases: Pick<ModelAliasesStore, 'get' | 'lock' | 'appendMove'>; policies: AliasPoliciesStore; models: Pick<ModelsStore, 'lockLiveByPair' | 'byId'> },
  ) {}

  /**
   * Sets the alias's traffic policy in place of the one it had: the versions
   * are live versions of the alias's model code, the alias's own version among
   * the weighted ones; the change is a row of the alias's history.
   */
  async set(principal: Principal, code: string, alias: string, body: unknown, requestId: string | null) {
    const key = aliasKeyOf(principal, code, alias);
    // Another workspace's alias (or none) is a 404 before the versions are looked at: they are not this workspace's.
    if (!(await this.stores.aliases.get(this.db, key))) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
    const asked = policyInput(body);
    const stored = await this.db.transaction(async (tx) => {
      // The versions before the alias, in the order a move takes its locks.
      const models = await this.lockVersions(tx, key, asked);
      const ids = new Map([...models].map(([version, model]) => [version, model.id]));
      const row = await this.stores.aliases.lock(tx, key);
      if (!row) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
      const primary = asked.weights.find((w) => ids.get(w.version) === row.model_id);
      if (!primary) throw new InputError(`weights: the alias's own version is its primary target and must be weighted.`, [{ field: 'weights', message: "must weight the alias's version" }]);
      const ordered: PolicySnapshot = { ...asked, weights: [primary, ...asked.weights.filter((w) => w !== primary)] };
      // The candidates are what guards judge, so their feedback schemas are what a feedback guard must fit.
      for (const { version } of ordered.weights.slice(1)) checkFeedbackGuards(asked.guards, version, models.get(version)!.feedback_schema);
      const version = primary.version;
      const before = await this.stores.policies.of(tx, row.id);
      const from = before ? snapshotOf(before, version) : null;
      const to = snapshotOf(await this.write(tx, row.id, ordered, ids, principal.user.id), version);
      if (JSON.stringify(from) !== JSON.stringify(to)) {
        await this.stores.aliases.appendMove(tx, { ...moveKeyOf(key), from_version: version, to_version: version, actor_user_id: principal.user.id, request_id: requestId, from_policy: from, to_policy: to });
      }
      return { policy: (await this.stores.policies.of(tx, row.id))!, version };
    });
    return presentPolicy(stored.policy, stored.version);
  }

  async get(principal: Principal, code: string, alias: string) {
    const row = await this.stores.aliases.get(this.db, aliasKeyOf(principal, code, alias));
    const policy = row && (await this.stores.policies.of(this.db, row.id));
    if (!row || !policy) throw new NotFoundError(`Alias ${alias} of ${code} has no traffic policy.`);
    return presentPolicy(policy, row.version);
  }

  /** Deletes the alias's policy: every new session runs the alias's version again. */
  async remove(principal: Principal, code: string, alias: string, requestId: string | null) {
    const key = aliasKeyOf(principal, code, alias);
    await this.db.transaction(async (tx) => {
      const row = await this.stores.aliases.lock(tx, key);
      const policy = row && (await this.stores.policies.of(tx, row.id));
      if (!row || !policy) throw new NotFoundError(`Alias ${alias} of ${code} has no traffic policy.`);
      const version = (await this.stores.models.byId(tx, row.model_id))!.version;
      await this.stores.policies.remove(tx, row.id);
      await this.stores.aliases.appendMove(tx, { ...moveKeyOf(key), from_version: version, to_version: version, actor_user_id: principal.user.id, request_id: requestId, from_policy: snapshotOf(policy, version) });
    });
  }

  /** Carries the alias's policy, if any, over a move from `from` to `target` (policyAfterMove), in the move's transaction; the policy before and after, for the history. */
  async carryOver(tx: Runner, aliasId: number, from: string, target: ModelRow, userId: number): Promise<{ from_policy?: PolicySnapshot; to_policy?: PolicySnapshot }> {
    const policy = await this.stores.policies.of(tx, aliasId);
    if (!policy) return {};
    const before = snapshotOf(policy, from);
    const after = policyAfterMove(before, target.version);
    const ids = new Map([...policy.targets.map((t) => [t.version, t.model_id] as const), [target.version, target.id] as const]);
    await this.write(tx, aliasId, after, ids, userId);
    return { from_policy: before, to_policy: after };
  }

  /**
   * A guard's rollback, in the caller's transaction with the alias row locked:
   * the candidate `version`'s weight goes to the primary and it stays in the
   * policy at 0; undefined when it is no longer a weighted candidate above 0.
   */
  async zeroCandidate(tx: Runner, aliasId: number, primaryVersion: string, version: string): Promise<{ from_policy: PolicySnapshot; to_policy: PolicySnapshot } | undefined> {
    const policy = await this.stores.policies.of(tx, aliasId);
    const candidate = policy?.targets.find((t) => t.role === 'weighted' && t.version === version && t.weight! > 0);
    if (!policy || !candidate) return undefined;
    const before = snapshotOf(policy, primaryVersion);
    const [primary, ...others] = before.weights;
    const after: PolicySnapshot = { ...before, weights: [{ ...primary!, weight: primary!.weight + candidate.weight! }, ...others.map((w) => (w.version === version ? { ...w, weight: 0 } : w))] };
    const ids = new Map([...policy.targets.map((t) => [t.version, t.model_id] as const)]);
    await this.write(tx, aliasId, after, ids, null);
    return { from_policy: before, to_policy: after };
  }

  /** Share-locks each version the policy names (a live version of the alias's model code, else a 400 naming it); their rows by version. */
  private async lockVersions(tx: Runner, key: AliasKey, policy: PolicySnapshot): Promise<Map<string, ModelRow>> {
    const ids = new Map<string, ModelRow>();
    const named = [...policy.weights.map((w, i) => [w.version, `weights[${i}].version`] as const), ...policy.shadows.map((v, i) => [v, `shadows[${i}]`] as const)];
    for (const [version, field] of named) {
      const model = await this.stores.models.lockLiveByPair(tx, key.workspaceId, key.modelCode, version);
      if (!model) throw new InputError(`${field}: ${key.modelCode} has no live version ${version} in this workspace.`, [{ field, message: `no live version ${version} of ${key.modelCode}` }]);
      ids.set(version, model);
    }
    return ids;
  }

  /** Writes the policy (its first weight the primary's) and reads it back. */
  private async write(tx: Runner, aliasId: number, policy: PolicySnapshot, ids: Map<string, number>, userId: number | null) {
    const [primary, ...others] = policy.weights;
    const targets: PolicyTargetRow[] = [
      ...others.map((w) => ({ model_id: ids.get(w.version)!, role: 'weighted' as const, weight: w.weight })),
      ...policy.shadows.map((v) => ({ model_id: ids.get(v)!, role: 'shadow' as const, weight: null })),
    ];
    await this.stores.policies.replace(tx, { alias_id: aliasId, sticky: policy.sticky, primary_weight: primary!.weight, guards: policy.guards ?? null, updated_by_id: userId }, targets);
    return (await this.stores.policies.of(tx, aliasId))!;
  }
}
