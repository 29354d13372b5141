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
// A server without the repository extension.
const NO_INDEX = [400, 404, 405, 501];

interface IndexEntry {
  name?: unknown;
  version?: unknown;
  state?: unknown;
  reason?: unknown;
}

/**
 * The model repository of an Open Inference Protocol (v2) server. A model
 * version is known when the server has metadata for it, or, when it is not
 * loaded, when the repository index lists it.
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
    if (metadata.status < 300) return this.checkedMetadata(metadata.body);
    const entry = await this.indexEntry(modelCode, version);
    if (!entry) return null;
    return { name: modelCode, versions: [version], state: entry.state ?? null, ...(entry.reason ? { reason: entry.reason } : {}), source: 'repository_index' };
  }

  async health(): Promise<void> {
    await this.call('GET', '/v2/health/live', []);
  }

  private async indexEntry(modelCode: string, version: string): Promise<IndexEntry | undefined> {
    const index = await this.call('POST', '/v2/repository/index', NO_INDEX, {});
    if (index.status >= 300) return undefined;
    if (!Array.isArray(index.body)) throw unexpectedAnswer(this.deps.deploymentKey, 'model registry', 'a repository index that is not a list');
    return (index.body as IndexEntry[]).find((entry) => entry?.name === modelCode && String(entry.version ?? '') === version);
  }

  private checkedMetadata(body: unknown): Record<string, unknown> {
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { name?: unknown }).name !== 'string') {
      throw unexpectedAnswer(this.deps.deploymentKey, 'model registry', 'model metadata without a name');
    }
    return body as Record<string, unknown>;
  }

  private call(method: 'GET' | 'POST', path: string, accept: readonly number[], json?: unknown) {
    return callUpstream(this.deps.deploymentKey, 'model registry', () =>
      // The index is a read, safe to repeat even though it is a POST.
      this.deps.http.request({ method, url: `${this.base}${path}`, json, token: this.token, accept, idempotent: true }),
    );
  }
}
