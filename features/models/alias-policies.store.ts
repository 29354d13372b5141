import type { Runner } from '../../infra/db/database.js';
import type { AliasKey } from './aliases.store.js';
import type { Sticky } from './alias-policy.js';
import type { PolicyGuards } from './alias-guards.js';

/** The traffic policy of one alias: its sticky key and the weight of the alias's own version. */
export interface PolicyRow {
  alias_id: number;
  sticky: Sticky;
  primary_weight: number;
  guards: PolicyGuards | null;
  updated_by_id: number | null;
  updated_at: Date;
}

/** A policy with guards, as the guard evaluation reads it: where its alias is and since when its candidates are judged. */
export interface GuardedPolicy {
  alias_id: number;
  workspace_id: number;
  workspace: string;
  model_code: string;
  alias: string;
  updated_at: Date;
}

/** Another version a policy names: weighted, or a shadow (weight null). */
export interface PolicyTargetRow {
  model_id: number;
  role: 'weighted' | 'shadow';
  weight: number | null;
}

/** A policy as read: its row and its targets with their versions, ordered by model id. */
export interface StoredPolicy {
  row: PolicyRow;
  targets: Array<PolicyTargetRow & { version: string }>;
}

/** What a new session on an alias chooses among: the alias's version and, with a policy, its weighted targets. */
export interface AliasRoute {
  aliasId: number;
  modelId: number;
  policy?: { sticky: Sticky; primaryWeight: number; weighted: Array<{ modelId: number; weight: number }> };
}

/** Every query of `alias_policies` and `alias_policy_targets`; writes take the caller's transaction. */
export interface AliasPoliciesStore {
  of(db: Runner, aliasId: number): Promise<StoredPolicy | undefined>;
  /** The policies of these aliases (those that have one). */
  ofAliases(db: Runner, aliasIds: number[]): Promise<Map<number, StoredPolicy>>;
  /** Writes the policy and its targets in place of what the alias had; `guards` left out keeps the policy's guards. */
  replace(tx: Runner, row: Omit<PolicyRow, 'updated_at' | 'guards'> & { guards?: PolicyGuards | null }, targets: PolicyTargetRow[]): Promise<void>;
  /** Up to `limit` policies with guards, after alias id `after`, by alias id. */
  guarded(db: Runner, after: number, limit: number): Promise<GuardedPolicy[]>;
  remove(tx: Runner, aliasId: number): Promise<void>;
  /** One query: the alias, its policy and its weighted targets; undefined when there is no such alias. */
  route(db: Runner, key: AliasKey): Promise<AliasRoute | undefined>;
  /** The live shadow versions of the alias's policy, by model id; none without a policy. */
  shadows(db: Runner, key: AliasKey): Promise<number[]>;
  /** The names of the aliases whose policies name any of these models. */
  aliasesTargeting(db: Runner, modelIds: number[]): Promise<string[]>;
}

const targetsWithVersion = (db: Runner) =>
  db('alias_policy_targets as t').join('models as m', 'm.id', 't.model_id').select('t.alias_id', 't.model_id', 't.role', 't.weight', 'm.version').orderBy('t.model_id');

export const aliasPoliciesStore: AliasPoliciesStore = {
  of: async (db, aliasId) => (await aliasPoliciesStore.ofAliases(db, [aliasId])).get(aliasId),
  ofAliases: async (db, aliasIds) => {
    const policies = new Map<number, StoredPolicy>();
    if (!aliasIds.length) return policies;
    for (const row of (await db<PolicyRow>('alias_policies').whereIn('alias_id', aliasIds)) as PolicyRow[]) policies.set(row.alias_id, { row, targets: [] });
    const targets = (await targetsWithVersion(db).whereIn('t.alias_id', aliasIds)) as Array<PolicyTargetRow & { alias_id: number; version: string }>;
    for (const { alias_id, ...target } of targets) policies.get(alias_id)?.targets.push(target);
    return policies;
  },
  replace: async (tx, row, targets) => {
    const guards = row.guards === undefined ? {} : { guards: row.guards === null ? null : JSON.stringify(row.guards) };
    await tx('alias_policies')
      .insert({ ...row, ...guards, updated_at: tx.raw('clock_timestamp()') })
      .onConflict('alias_id')
      .merge();
    await tx('alias_policy_targets').where({ alias_id: row.alias_id }).delete();
    if (targets.length) await tx('alias_policy_targets').insert(targets.map((t) => ({ ...t, alias_id: row.alias_id })));
  },
  guarded: async (db, after, limit) =>
    (await db('alias_policies as p')
      .join('model_aliases as a', 'a.id', 'p.alias_id')
      .join('workspaces as w', 'w.id', 'a.workspace_id')
      .whereNotNull('p.guards')
      .where('p.alias_id', '>', after)
      .orderBy('p.alias_id')
      .limit(limit)
      .select('p.alias_id', 'a.workspace_id', 'w.name as workspace', 'a.model_code', 'a.alias', 'p.updated_at')) as GuardedPolicy[],
  remove: async (tx, aliasId) => {
    await tx('alias_policies').where({ alias_id: aliasId }).delete();
  },
  route: async (db, key) => {
    const rows = (await db('model_aliases as a')
      .leftJoin('alias_policies as p', 'p.alias_id', 'a.id')
      .leftJoin('alias_policy_targets as t', function () {
        this.on('t.alias_id', '=', 'a.id').andOnVal('t.role', '=', 'weighted');
      })
      .where({ 'a.workspace_id': key.workspaceId, 'a.model_code': key.modelCode, 'a.alias': key.alias })
      .orderBy('t.model_id')
      .select('a.id', 'a.model_id', 'p.sticky', 'p.primary_weight', 't.model_id as target_id', 't.weight')) as Array<{
      id: number;
      model_id: number;
      sticky: Sticky | null;
      primary_weight: number | null;
      target_id: number | null;
      weight: number | null;
    }>;
    const first = rows[0];
    if (!first) return undefined;
    const route: AliasRoute = { aliasId: first.id, modelId: first.model_id };
    if (first.sticky === null) return route;
    const weighted = rows.filter((r) => r.target_id !== null).map((r) => ({ modelId: r.target_id!, weight: r.weight! }));
    return { ...route, policy: { sticky: first.sticky, primaryWeight: first.primary_weight!, weighted } };
  },
  shadows: async (db, key) =>
    (await db('model_aliases as a')
      .join('alias_policy_targets as t', 't.alias_id', 'a.id')
      .join('models as m', 'm.id', 't.model_id')
      .where({ 'a.workspace_id': key.workspaceId, 'a.model_code': key.modelCode, 'a.alias': key.alias, 't.role': 'shadow' })
      .whereNull('m.deleted_at')
      .orderBy('t.model_id')
      .pluck('t.model_id')) as number[],
  aliasesTargeting: async (db, modelIds) => {
    if (!modelIds.length) return [];
    const rows = (await db('alias_policy_targets as t').join('model_aliases as a', 'a.id', 't.alias_id').whereIn('t.model_id', modelIds).distinct('a.alias').orderBy('a.alias')) as Array<{ alias: string }>;
    return rows.map((r) => r.alias);
  },
};
