import type { AliasMoveRow, AliasWithVersion } from './aliases.store.js';
import type { StoredPolicy } from './alias-policies.store.js';
import type { PolicySnapshot } from './alias-policy.js';

/** An alias as the API's ModelAlias, with its traffic policy (null: every session on its version). */
export function presentAlias(row: AliasWithVersion, workspace: string, policy?: StoredPolicy) {
  return {
    alias: row.alias,
    model_code: row.model_code,
    version: row.version,
    workspace,
    updated_by: row.updated_by_id === null ? null : String(row.updated_by_id),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    policy: policy ? presentPolicy(policy, row.version) : null,
  };
}

/** A policy as the API's AliasPolicy: the alias's own version first among the weights. */
export function presentPolicy(policy: StoredPolicy, primaryVersion: string) {
  return {
    ...snapshotOf(policy, primaryVersion),
    guards: policy.row.guards,
    updated_by: policy.row.updated_by_id === null ? null : String(policy.row.updated_by_id),
    updated_at: new Date(policy.row.updated_at).toISOString(),
  };
}

/** A policy by version names, as the history keeps it. */
export function snapshotOf(policy: StoredPolicy, primaryVersion: string): PolicySnapshot {
  const weighted = policy.targets.filter((t) => t.role === 'weighted').map((t) => ({ version: t.version, weight: t.weight! }));
  return {
    sticky: policy.row.sticky,
    weights: [{ version: primaryVersion, weight: policy.row.primary_weight }, ...weighted],
    shadows: policy.targets.filter((t) => t.role === 'shadow').map((t) => t.version),
    ...(policy.row.guards && { guards: policy.row.guards }),
  };
}

/** One move of an alias as the API's ModelAliasMove: set (`from_version` null), moved, deleted (`to_version` null), or its policy changed. */
export function presentAliasMove(row: AliasMoveRow) {
  return {
    id: row.id,
    alias: row.alias,
    model_code: row.model_code,
    from_version: row.from_version,
    to_version: row.to_version,
    moved_by: row.actor_user_id === null ? null : String(row.actor_user_id),
    request_id: row.request_id,
    from_policy: row.from_policy,
    to_policy: row.to_policy,
    reason: row.reason,
    moved_at: new Date(row.created_at).toISOString(),
  };
}
