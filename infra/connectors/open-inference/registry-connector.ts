import type { UrlPolicy } from '../../net/url-policy.js';
import { callUpstream, unexpectedAnswer } from '../errors.js';
import { segment, validateInit, type InitSpec } from '../init.js';
import type { ConnectorDeps, ConnectorInit, RegistryConnector } from '../types.js';

export const OPEN_INFERENCE_REGISTRY_SPEC: InitSpec = {
  className: 'didyma.registry.OpenInferenceRegistryConnector',
  urls: ['model_registry_url', 'tracking_server_url'],
  // The repository is usually the model server itself, so its token may be the proxy's.
  secrets: ['tracking_server_pat', 'server_proxy_pat'],
};

// Servers disagree on "unknown model": MLServer answers 404, Triton 400.
const NOT_HERE = [400, 404];

/**
 * The model repository of an Open Inference Protocol (v2) server. A model
 * version is known when the server answers its metadata: one it lists in its
 * repository index but cannot describe (not loaded) cannot serve an
 * invocation either, so it is not registered.
 */
export class OpenInferenceRegistryConnector implements RegistryConnector {
  private readonly base: string;
  private readonly token: string | undefined;

  constructor(
    init: ConnectorInit,
    private readonly deps: ConnectorDeps,
  ) {
    this.base = (init.model_registry_url ?? init.tracking_server_url) as string;
    this.token = init.tracking_server_pat ?? init.server_proxy_pat;
  }

  static validateInit(init: unknown, field: string, policy: UrlPolicy): ConnectorInit {
    return validateInit(init, field, OPEN_INFERENCE_REGISTRY_SPEC, policy);
  }

  async lookup(modelCode: string, version: string): Promise<Record<string, unknown> | null> {
    const metadata = await this.call('GET', `/v2/models/${segment(modelCode)}/versions/${segment(version)}`, NOT_HERE);
    return metadata.status < 300 ? this.checkedMetadata(metadata.body) : null;
  }

  async health(): Promise<void> {
    await this.call('GET', '/v2/health/live', []);
  }

  private checkedMetadata(body: unknown): Record<string, unknown> {
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { name?: unknown }).name !== 'string') {
      throw unexpectedAnswer(this.deps.deploymentKey, 'model registry', 'model metadata without a name');
    }
    return body as Record<string, unknown>;
  }

  private call(method: 'GET', path: string, accept: readonly number[]) {
    return callUpstream(this.deps.deploymentKey, 'model registry', () => this.deps.http.request({ method, url: `${this.base}${path}`, token: this.token, accept, idempotent: true }));
  }
}
