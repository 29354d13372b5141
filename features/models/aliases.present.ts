import type { AliasMoveRow, AliasWithVersion } from './aliases.store.js';

/** An alias as the API's ModelAlias. */
export function presentAlias(row: AliasWithVersion, workspace: string) {
  return {
    alias: row.alias,
    model_code: row.model_code,
    version: row.version,
    workspace,
    updated_by: row.updated_by_id === null ? null : String(row.updated_by_id),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** One move of an alias as the API's ModelAliasMove: set (`from_version` null), moved, or deleted (`to_version` null). */
export function presentAliasMove(row: AliasMoveRow) {
  return {
    id: row.id,
    alias: row.alias,
    model_code: row.model_code,
    from_version: row.from_version,
    to_version: row.to_version,
    moved_by: row.actor_user_id === null ? null : String(row.actor_user_id),
    request_id: row.request_id,
    moved_at: new Date(row.created_at).toISOString(),
  };
}
