import type { Logger } from 'pino';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import { clusterWrite, type DesiredStateWriter } from '../../infra/kube/writer.js';
import type { DeploymentListener } from '../../features/deployments/service.js';
import type { StorageListener } from '../../features/files/storage.service.js';
import { desiredDeployment, desiredStorage } from './rows.js';

/** The hooks the deployment and storage services call inside their transactions, in Kubernetes mode. */
export function kubeListeners(writer: DesiredStateWriter, box: SecretBox, logger: Logger): { deployments: DeploymentListener; storage: StorageListener } {
  return {
    deployments: {
      applied: (row, workspace) =>
        clusterWrite(logger, `ModelDeployment "${row.deployment_key}"`, async () => {
          await writer.apply(desiredDeployment(row, workspace, box.openJson(row.secrets_sealed)));
        }),
      deleted: (row, workspace) => clusterWrite(logger, `deletion of ModelDeployment "${row.deployment_key}"`, () => writer.remove('deployment', workspace, row.deployment_key)),
    },
    storage: {
      applied: (row, secrets, workspace) =>
        clusterWrite(logger, `StorageConfig "${row.storage_key}"`, async () => {
          await writer.apply(desiredStorage(row, workspace, secrets));
        }),
      deleted: (row, workspace) => clusterWrite(logger, `deletion of StorageConfig "${row.storage_key}"`, () => writer.remove('storage', workspace, row.storage_key)),
    },
  };
}
