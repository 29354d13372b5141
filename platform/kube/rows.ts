import type { Runner } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import { scalarValues, stringValues, type Desired, type DesiredDeployment, type DesiredStorage } from '../../infra/kube/desired.js';
import { deploymentsStore, type DeploymentRow } from '../../features/deployments/store.js';
import { storageConfigsStore, type StorageConfigRow } from '../../features/files/store.js';

// The database as the source of the desired state: rows to desired resources.

export function desiredDeployment(row: DeploymentRow, workspace: string, secrets: Record<string, string>): DesiredDeployment {
  return {
    kind: 'deployment',
    workspace,
    key: row.deployment_key,
    registry: { className: row.registry_connector_class, init: stringValues(row.registry_connector_init) },
    serverProxy: { className: row.server_proxy_class, init: stringValues(row.server_proxy_init) },
    secrets,
  };
}

export function desiredStorage(row: StorageConfigRow, workspace: string, secrets: Record<string, string>): DesiredStorage {
  return { kind: 'storage', workspace, key: row.storage_key, className: row.storage_class, init: scalarValues(row.connector_init), secrets };
}

/** Every live deployment and storage configuration of every live workspace, credentials opened. */
export async function liveDesired(db: Runner, box: SecretBox): Promise<Desired[]> {
  const [deployments, storage] = await Promise.all([deploymentsStore.liveEverywhere(db), storageConfigsStore.liveEverywhere(db)]);
  return [
    ...deployments.map((row) => desiredDeployment(row, row.workspace_name, box.openJson(row.secrets_sealed))),
    ...storage.map((row) => desiredStorage(row, row.workspace_name, box.openJson(row.secrets_sealed))),
  ];
}
