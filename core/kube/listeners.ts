import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { SecretBox } from '../crypto/secrets.js';
import type { DeploymentListener } from '../deployments/service.js';
import type { StorageListener } from '../files/storage.service.js';
import { desiredDeployment, desiredStorage, workspaceName } from './rows.js';
import { clusterWrite, type DesiredStateWriter } from './writer.js';

/**
 * The hooks the deployment and storage services call inside their
 * transactions, in Kubernetes mode. The workspace row is committed long
 * before, so reading its name outside the transaction is safe.
 */
export function kubeListeners(writer: DesiredStateWriter, db: Db, box: SecretBox, logger: Logger): { deployments: DeploymentListener; storage: StorageListener } {
  return {
    deployments: {
      applied: (row) =>
        clusterWrite(logger, `ModelDeployment "${row.deployment_key}"`, async () => {
          await writer.apply(desiredDeployment(row, await workspaceName(db, row.workspace_id), box.openJson(row.secrets_sealed)));
        }),
      deleted: (row) => clusterWrite(logger, `deletion of ModelDeployment "${row.deployment_key}"`, async () => writer.remove('deployment', await workspaceName(db, row.workspace_id), row.deployment_key)),
    },
    storage: {
      applied: (row, secrets) =>
        clusterWrite(logger, `StorageConfig "${row.storage_key}"`, async () => {
          await writer.apply(desiredStorage(row, await workspaceName(db, row.workspace_id), secrets));
        }),
      deleted: (row) => clusterWrite(logger, `deletion of StorageConfig "${row.storage_key}"`, async () => writer.remove('storage', await workspaceName(db, row.workspace_id), row.storage_key)),
    },
  };
}
