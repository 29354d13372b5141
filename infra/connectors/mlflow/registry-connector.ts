import YAML from 'yaml';
import { excerptOf } from '../../net/excerpt.js';
import type { HttpResponse } from '../../net/http-client.js';
import type { UrlPolicy } from '../../net/url-policy.js';
import { callUpstream, UpstreamError, unexpectedAnswer } from '../errors.js';
import { validateInit, type InitSpec } from '../init.js';
import type { ConnectorDeps, ConnectorInit, RegistryConnector, RegistrySchemas } from '../types.js';
import { SignatureError, signatureSchemas, type MlflowSignature } from './signature.js';

export const MLFLOW_REGISTRY_SPEC: InitSpec = {
  className: 'didyma.registry.MlflowRegistryConnector',
  urls: ['model_registry_url', 'tracking_server_url'],
  required: { tracking_server_url: 'the connector reads the model signature from the tracking server' },
  secrets: ['tracking_server_pat'],
};

// MLflow answers an unknown name or version with this code, as 404 or (older servers) 400.
const MISSING = 'RESOURCE_DOES_NOT_EXIST';
// MLflow numbers versions 1, 2, …: anything else cannot be in the registry.
const MLFLOW_VERSION = /^[1-9]\d{0,17}$/;

/** The MLflow model registry REST API (open-source MLflow or a hosted one taking a bearer token). */
export class MlflowRegistryConnector implements RegistryConnector {
  private readonly base: string;
  private readonly tracking: string;
  private readonly token: string | undefined;

  constructor(
    init: ConnectorInit,
    private readonly deps: ConnectorDeps,
  ) {
    this.base = (init.model_registry_url ?? init.tracking_server_url) as string;
    this.tracking = init.tracking_server_url ?? this.base;
    this.token = init.tracking_server_pat;
  }

  static validateInit(init: unknown, field: string, policy: UrlPolicy): ConnectorInit {
    return validateInit(init, field, MLFLOW_REGISTRY_SPEC, policy);
  }

  /** The model version's registry record, with its registered model (description, tags, aliases). */
  async lookup(modelCode: string, version: string): Promise<Record<string, unknown> | null> {
    if (!MLFLOW_VERSION.test(version)) return null;
    const modelVersion = await this.get('/api/2.0/mlflow/model-versions/get', { name: modelCode, version }, 'model_version');
    if (!modelVersion) return null;
    const registeredModel = await this.get('/api/2.0/mlflow/registered-models/get', { name: modelCode }, 'registered_model');
    if (!registeredModel) return null;
    return { ...modelVersion, registered_model: registeredModel };
  }

  /**
   * The input and output schemas of the version's logged model signature,
   * read from its MLmodel file on the tracking server; none when the version
   * or its signature is missing.
   */
  async schemasOf(modelCode: string, version: string): Promise<RegistrySchemas> {
    const key = this.deps.deploymentKey;
    const query = new URLSearchParams({ path: 'MLmodel', name: modelCode, version }).toString();
    const url = `${this.tracking}/model-versions/get-artifact?${query}`;
    const answer = await callUpstream(key, 'tracking server', () => this.deps.http.request({ method: 'GET', url, token: this.token, accept: [404] }));
    if (answer.status === 404) return {};
    const signature = signatureOf(answer.text);
    if (signature === undefined) throw unexpectedAnswer(key, 'tracking server', 'an MLmodel file that is not YAML');
    try {
      return signature ? signatureSchemas(signature) : {};
    } catch (error) {
      if (error instanceof SignatureError) throw unexpectedAnswer(key, 'tracking server', `a model signature the platform cannot read: ${error.message}`);
      throw error;
    }
  }

  /** A one-item search: proves the registry answers and accepts the token. */
  async health(): Promise<void> {
    await this.call('/api/2.0/mlflow/registered-models/search', { max_results: '1' }, []);
  }

  /** The object under `key` in the answer, or null when MLflow says it does not exist. */
  private async get(path: string, query: Record<string, string>, key: string): Promise<Record<string, unknown> | null> {
    const answer = await this.call(path, query, [400, 404]);
    if (answer.status >= 300) return this.missingOrFail(answer);
    const record = (answer.body as Record<string, unknown> | null)?.[key];
    if (typeof record !== 'object' || record === null) throw unexpectedAnswer(this.deps.deploymentKey, 'model registry', `without "${key}"`);
    return record as Record<string, unknown>;
  }

  private missingOrFail(answer: HttpResponse): null {
    if ((answer.body as { error_code?: unknown } | null)?.error_code === MISSING) return null;
    const key = this.deps.deploymentKey;
    const excerpt = excerptOf(answer.text, this.token);
    throw new UpstreamError(key, `Deployment "${key}": the model registry failed: HTTP ${answer.status}: ${excerpt}`, false, answer.status);
  }

  private call(path: string, query: Record<string, string>, accept: readonly number[]): Promise<HttpResponse> {
    const url = `${this.base}${path}?${new URLSearchParams(query).toString()}`;
    return callUpstream(this.deps.deploymentKey, 'model registry', () => this.deps.http.request({ method: 'GET', url, token: this.token, accept }));
  }
}

/** The `signature` of an MLmodel file; null when it has none, undefined when the text is not a YAML mapping. */
function signatureOf(text: string): MlflowSignature | null | undefined {
  let mlmodel: unknown;
  try {
    mlmodel = YAML.parse(text);
  } catch {
    return undefined;
  }
  if (typeof mlmodel !== 'object' || mlmodel === null || Array.isArray(mlmodel)) return undefined;
  const { signature } = mlmodel as { signature?: unknown };
  return typeof signature === 'object' && signature !== null ? (signature as MlflowSignature) : null;
}
