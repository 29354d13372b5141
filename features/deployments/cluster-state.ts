import type { Runner } from '../../infra/db/database.js';

/**
 * How far the reconciler got with a row's custom resource (migration 0031):
 * `pending` committed, not yet applied; `applied`; `failed` (see its reason);
 * `removed`, a deleted row whose resource is gone.
 */
export type ClusterState = 'pending' | 'applied' | 'failed' | 'removed';

/**
 * Why a write failed: `cluster_error` the Kubernetes API refused it,
 * `cluster_unreachable` no answer came, `still_being_removed` a resource of
 * the same name (a key deleted a moment ago) is still being finalized.
 */
export type ClusterReason = 'cluster_error' | 'cluster_unreachable' | 'still_being_removed';

export interface ClusterStateColumns {
  cluster_state: ClusterState;
  cluster_reason: ClusterReason | null;
  cluster_message: string | null;
}

/** A deleted row whose resource may still be in the cluster. */
export interface RemovalRow extends ClusterStateColumns {
  id: number;
  key: string;
  workspace_name: string;
}

/** What the reconciler records of one row after a pass. */
export interface ClusterStateChange {
  id: number;
  state: ClusterState;
  reason: ClusterReason | null;
  message: string | null;
  /** Whether the row was deleted when read: an outcome is not written over a row that changed sides meanwhile. */
  deleted: boolean;
}

/** The reconciler's queries of one table. */
export interface ClusterStateStore {
  /** Deleted rows whose resource may still be in the cluster, with their workspace's name (deleted workspaces too). */
  awaitingRemoval(db: Runner): Promise<RemovalRow[]>;
  /** Writes each change unless the row already says so: a pass that changed nothing writes nothing. */
  record(db: Runner, changes: readonly ClusterStateChange[]): Promise<void>;
}

export function clusterStateStore(table: 'deployments' | 'storage_configs', keyColumn: 'deployment_key' | 'storage_key'): ClusterStateStore {
  return {
    awaitingRemoval: (db) =>
      db(`${table} as r`)
        .join('workspaces as w', 'w.id', 'r.workspace_id')
        .whereNotNull('r.deleted_at')
        .whereNot('r.cluster_state', 'removed')
        .orderBy('r.id')
        .select('r.id', `r.${keyColumn} as key`, 'w.name as workspace_name', 'r.cluster_state', 'r.cluster_reason', 'r.cluster_message'),
    async record(db, changes) {
      for (const change of changes) {
        const row = db(table).where({ id: change.id });
        await (change.deleted ? row.whereNotNull('deleted_at') : row.whereNull('deleted_at'))
          .where((q) => q.whereNot('cluster_state', change.state).orWhereRaw('cluster_message is distinct from ?', [change.message]))
          .update({ cluster_state: change.state, cluster_reason: change.reason, cluster_message: change.message });
      }
    },
  };
}

/** What GET and list show of a live row in Kubernetes mode: its state, and why when it failed. */
export function clusterStatus(row: ClusterStateColumns): { cluster_state: ClusterState; cluster_reason?: ClusterReason; cluster_message?: string } {
  if (row.cluster_state !== 'failed') return { cluster_state: row.cluster_state };
  return { cluster_state: row.cluster_state, cluster_reason: row.cluster_reason ?? 'cluster_error', cluster_message: row.cluster_message ?? 'The cluster did not take the change.' };
}
