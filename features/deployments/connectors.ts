import type { SecretBox } from '../../infra/crypto/secrets.js';
import type { ConnectorCatalog } from '../../infra/connectors/registry.js';
import type { ConnectorInit, RegistryConnector, ServerProxy } from '../../infra/connectors/types.js';
import type { HttpClient } from '../../infra/net/http-client.js';
import { fullInit } from './secrets.js';
import type { DeploymentRow } from './store.js';

/**
 * Builds the registry connector and server proxy of a stored deployment (its
 * init with the decrypted credentials). Used by model registration and by the
 * executor; the embedded default and the Kubernetes operator share it.
 */
export class DeploymentConnectors {
  constructor(
    private readonly catalog: ConnectorCatalog,
    private readonly http: HttpClient,
    private readonly box: SecretBox,
  ) {}

  /** `workspace`: the name of the row's workspace, which classes reading the cluster check. */
  registryOf(row: DeploymentRow, workspace?: string): RegistryConnector {
    const init = fullInit(row.registry_connector_init, row.secrets_sealed, this.box) as ConnectorInit;
    return this.catalog.createRegistryConnector(row.registry_connector_class, onlyStrings(init), { http: this.http, deploymentKey: row.deployment_key, workspace });
  }

  proxyOf(row: DeploymentRow): ServerProxy {
    const init = fullInit(row.server_proxy_init, row.secrets_sealed, this.box) as ConnectorInit;
    return this.catalog.createServerProxy(row.server_proxy_class, onlyStrings(init), { http: this.http, deploymentKey: row.deployment_key });
  }
}

// Registry and proxy share the sealed secrets of the deployment; each class
// receives every key and reads only its own.
function onlyStrings(init: Record<string, unknown>): ConnectorInit {
  return Object.fromEntries(Object.entries(init).filter(([, v]) => typeof v === 'string')) as ConnectorInit;
}
