import type { UrlPolicy } from '../../net/url-policy.js';
import { callUpstream, unexpectedAnswer } from '../errors.js';
import { segment, validateInit, type InitSpec } from '../init.js';
import type { ConnectorDeps, ConnectorInit, InferenceInput, InferenceOutput, ServerProxy } from '../types.js';
import { toInferenceRequest, withContext } from './tensors.js';

export const OPEN_INFERENCE_PROXY_SPEC: InitSpec = {
  className: 'modelplane.proxy.OpenInferenceServerProxy',
  urls: ['server_proxy_url'],
  secrets: ['server_proxy_pat'],
};

/**
 * Runs models on an Open Inference Protocol (v2) server: KServe, Triton,
 * MLServer, Seldon, or the demo model server.
 */
export class OpenInferenceServerProxy implements ServerProxy {
  private readonly base: string;
  private readonly token: string | undefined;

  constructor(
    init: ConnectorInit,
    private readonly deps: ConnectorDeps,
  ) {
    this.base = init.server_proxy_url as string;
    this.token = init.server_proxy_pat;
  }

  static validateInit(init: unknown, field: string, policy: UrlPolicy): ConnectorInit {
    return validateInit(init, field, OPEN_INFERENCE_PROXY_SPEC, policy);
  }

  async infer(input: InferenceInput): Promise<InferenceOutput> {
    const request = withContext(toInferenceRequest(input.body), input.context);
    const url = `${this.base}/v2/models/${segment(input.modelCode)}/versions/${segment(input.version)}/infer`;
    // Not idempotent: a retry after the server may have run the model would run it twice.
    const answer = await callUpstream(this.deps.deploymentKey, 'model server', () =>
      this.deps.http.request({ method: 'POST', url, json: request, token: this.token, idempotent: false }),
    );
    const outputs = (answer.body as { outputs?: unknown } | null)?.outputs;
    if (!Array.isArray(outputs)) throw unexpectedAnswer(this.deps.deploymentKey, 'model server', 'an inference response without outputs');
    return { response: JSON.stringify(answer.body) };
  }

  async health(): Promise<void> {
    await callUpstream(this.deps.deploymentKey, 'model server', () => this.deps.http.request({ method: 'GET', url: `${this.base}/v2/health/ready`, token: this.token }));
  }
}
