import { callUpstream } from '../errors.js';
import { segment } from '../init.js';
import { metadataSchemas } from '../open-inference/metadata-schemas.js';
import type { ConnectorDeps, ConnectorInit, RegistryConnector, RegistryOffer, RegistrySchemas } from '../types.js';
import type { KServeAccess } from './access.js';
import { answersToVersion, describe, explains, offerOf, predictorUrlOf, protocolOf, readinessOf, targetOf, type Component, type InferenceService } from './inference-service.js';
import { labelSelector, validateKServeInit, versioning } from './init.js';
import { DeploymentNamespaces } from './namespaces.js';

export const KSERVE_REGISTRY_CLASS = 'didyma.registry.KServeRegistryConnector';

/**
 * The InferenceServices of some namespaces as a model catalog: a service
 * named `model_code` (matching `label_selector`, when given), and its
 * explainer as `<name>.explainer`, know the version its `didyma.io/version`
 * annotation names, or, without one, any version the supervisor gives (KServe rolls revisions under one name, which
 * the server proxy follows). Ready or not: the metadata says which.
 */
export class KServeRegistryConnector implements RegistryConnector {
  private readonly namespaces: DeploymentNamespaces;
  private readonly selector: string | undefined;

  constructor(
    access: KServeAccess,
    init: ConnectorInit,
    private readonly deps: ConnectorDeps,
  ) {
    this.namespaces = new DeploymentNamespaces(access, init, deps, 'model registry');
    this.selector = init.label_selector;
  }

  static validateInit(access: KServeAccess | undefined, init: unknown, field: string, workspace?: string): ConnectorInit {
    return validateKServeInit(init, field, KSERVE_REGISTRY_CLASS, { label_selector: labelSelector, versioning }, access, workspace);
  }

  async lookup(modelCode: string, version: string): Promise<Record<string, unknown> | null> {
    const found = await this.serviceFor(modelCode, version);
    return found ? describe(found.service, found.component) : null;
  }

  /**
   * The schemas of the model's Open Inference metadata, read from its
   * predictor through the platform's outbound URL policy; none for a service
   * that speaks v1 (it has no metadata), is not ready, or does not describe
   * its tensors, nor for an explainer (explanations have no metadata).
   */
  async schemasOf(modelCode: string, version: string): Promise<RegistrySchemas> {
    const found = await this.serviceFor(modelCode, version);
    const service = found?.component === 'predictor' ? found.service : undefined;
    const base = service && predictorUrlOf(service);
    if (!service || !base || protocolOf(service) === 'v1' || !readinessOf(service).ready) return {};
    const url = `${base}/v2/models/${segment(service.metadata.name)}`;
    const answer = await callUpstream(this.deps.deploymentKey, 'model server', () => this.deps.http.request({ method: 'GET', url, accept: [400, 404], idempotent: true }));
    const metadata = answer.body;
    if (answer.status >= 300 || typeof metadata !== 'object' || metadata === null) return {};
    return metadataSchemas(metadata);
  }

  /** Every service of the namespaces (with the selector), ready or not, and the explainer of each that explains. */
  async offered(): Promise<RegistryOffer[]> {
    const services = await this.namespaces.list(this.selector);
    return services.flatMap((service) => [offerOf(service, 'predictor'), ...(explains(service) ? [offerOf(service, 'explainer')] : [])]);
  }

  async health(): Promise<void> {
    await this.namespaces.list(this.selector);
  }

  /** The service a model code names, and which of its components: an explainer only of a service that explains. */
  private async serviceFor(modelCode: string, version: string): Promise<{ service: InferenceService; component: Component } | undefined> {
    const { name, component } = targetOf(modelCode);
    const service = (await this.namespaces.list(this.selector)).find((s) => s.metadata.name === name);
    if (!service || !answersToVersion(service, version) || (component === 'explainer' && !explains(service))) return undefined;
    return { service, component };
  }
}
