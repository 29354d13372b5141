import type { ConnectorDeps, ConnectorInit, RegistryConnector } from '../types.js';
import type { KServeAccess } from './access.js';
import { answersToVersion, describe } from './inference-service.js';
import { labelSelector, validateKServeInit } from './init.js';
import { DeploymentNamespaces } from './namespaces.js';

export const KSERVE_REGISTRY_CLASS = 'didyma.registry.KServeRegistryConnector';

/**
 * The InferenceServices of some namespaces as a model catalog: a service
 * named `model_code` (matching `label_selector`, when given) knows the
 * version its `didyma.io/version` annotation names, or, without one, any
 * version the supervisor gives (KServe rolls revisions under one name, which
 * the server proxy follows). Ready or not: the metadata says which.
 */
export class KServeRegistryConnector implements RegistryConnector {
  private readonly namespaces: DeploymentNamespaces;
  private readonly selector: string | undefined;

  constructor(access: KServeAccess, init: ConnectorInit, deps: ConnectorDeps) {
    this.namespaces = new DeploymentNamespaces(access, init, deps, 'model registry');
    this.selector = init.label_selector;
  }

  static validateInit(access: KServeAccess | undefined, init: unknown, field: string, workspace?: string): ConnectorInit {
    return validateKServeInit(init, field, KSERVE_REGISTRY_CLASS, { label_selector: labelSelector }, access, workspace);
  }

  async lookup(modelCode: string, version: string): Promise<Record<string, unknown> | null> {
    const service = (await this.namespaces.list(this.selector)).find((s) => s.metadata.name === modelCode);
    return service && answersToVersion(service, version) ? describe(service) : null;
  }

  async health(): Promise<void> {
    await this.namespaces.list(this.selector);
  }
}
