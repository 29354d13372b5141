import { createHash } from 'node:crypto';
import type { Runner } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import type { ResourceKind } from '../../infra/kube/constants.js';
import { scalarValues, stringValues, type Desired, type DesiredDeployment, type DesiredStorage } from '../../infra/kube/desired.js';
import type { Removal } from '../../infra/kube/resync-plan.js';
import type { ClusterStateColumns, ClusterStateStore } from '../../features/deployments/cluster-state.js';
import { deploymentsStore, type DeploymentRow } from '../../features/deployments/store.js';
import { storageConfigsStore, type StorageConfigRow } from '../../features/files/store.js';

// The database as the source of the desired state: rows to desired resources.

/** A digest of the sealed credentials: new whenever they are sealed again, and telling nothing of them. */
const credentialsVersion = (sealed: string | null) => (sealed ? createHash('sha256').update(sealed).digest('hex').slice(0, 32) : undefined);

export function desiredDeployment(row: DeploymentRow, workspace: string, secrets: Record<string, string>): DesiredDeployment {
  return {
    kind: 'deployment',
    workspace,
    key: row.deployment_key,
    registry: { className: row.registry_connector_class, init: stringValues(row.registry_connector_init) },
    serverProxy: { className: row.server_proxy_class, init: stringValues(row.server_proxy_init) },
    secrets,
    credentialsVersion: credentialsVersion(row.secrets_sealed),
  };
}

export function desiredStorage(row: StorageConfigRow, workspace: string, secrets: Record<string, string>): DesiredStorage {
  return { kind: 'storage', workspace, key: row.storage_key, className: row.storage_class, init: scalarValues(row.connector_init), secrets, credentialsVersion: credentialsVersion(row.secrets_sealed) };
}

/** Which row a desired resource or a removal comes from, and what that row says of it now. */
export interface RowRef {
  kind: ResourceKind;
  id: number;
  state: ClusterStateColumns;
}

/** What the database wants of the cluster, each item with the row it comes from. */
export interface WantedRows {
  desired: Desired[];
  removals: Removal[];
  rowOf: Map<Desired | Removal, RowRef>;
}

/** The store that records each kind's cluster state. */
export const clusterStores: Record<ResourceKind, ClusterStateStore> = { deployment: deploymentsStore.cluster, storage: storageConfigsStore.cluster };

const stateOf = (row: ClusterStateColumns): ClusterStateColumns => ({ cluster_state: row.cluster_state, cluster_reason: row.cluster_reason, cluster_message: row.cluster_message });

/**
 * Every live deployment and storage configuration of every live workspace,
 * credentials opened, and every deleted one whose resource may still be there.
 */
export async function wantedRows(db: Runner, box: SecretBox): Promise<WantedRows> {
  const [deployments, storage, deletedDeployments, deletedStorage] = await Promise.all([
    deploymentsStore.liveEverywhere(db),
    storageConfigsStore.liveEverywhere(db),
    clusterStores.deployment.awaitingRemoval(db),
    clusterStores.storage.awaitingRemoval(db),
  ]);
  const wanted: WantedRows = { desired: [], removals: [], rowOf: new Map() };
  const add = <T extends Desired | Removal>(list: T[], item: T, ref: RowRef) => (list.push(item), wanted.rowOf.set(item, ref));
  for (const row of deployments) add(wanted.desired, desiredDeployment(row, row.workspace_name, box.openJson(row.secrets_sealed)), { kind: 'deployment', id: row.id, state: stateOf(row) });
  for (const row of storage) add(wanted.desired, desiredStorage(row, row.workspace_name, box.openJson(row.secrets_sealed)), { kind: 'storage', id: row.id, state: stateOf(row) });
  for (const [kind, rows] of [['deployment', deletedDeployments], ['storage', deletedStorage]] as const) {
    for (const row of rows) add(wanted.removals, { kind, workspace: row.workspace_name, key: row.key }, { kind, id: row.id, state: stateOf(row) });
  }
  return wanted;
}
