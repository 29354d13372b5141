import type { UrlPolicy } from '../../net/url-policy.js';
import { unexpectedAnswer } from '../errors.js';
import { HttpServerProxy } from '../http-server-proxy.js';
import { segment, validateInit, type InitSpec } from '../init.js';
import type { CallOptions, ConnectorInit, InferenceInput, InferenceOutput } from '../types.js';
import { toInferenceRequest, withContext } from './tensors.js';

export const OPEN_INFERENCE_PROXY_SPEC: InitSpec = {
  className: 'didyma.proxy.OpenInferenceServerProxy',
  urls: ['server_proxy_url'],
  secrets: ['server_proxy_pat'],
};

/**
 * Runs models on an Open Inference Protocol (v2) server: KServe, Triton,
 * MLServer, Seldon, or the demo model server.
 */
export class OpenInferenceServerProxy extends HttpServerProxy {
  static validateInit(init: unknown, field: string, policy: UrlPolicy): ConnectorInit {
    return validateInit(init, field, OPEN_INFERENCE_PROXY_SPEC, policy);
  }

  async infer(input: InferenceInput, options: CallOptions = {}): Promise<InferenceOutput> {
    const request = withContext(toInferenceRequest(input.body), input.context);
    const url = `${this.base}/v2/models/${segment(input.modelCode)}/versions/${segment(input.version)}/infer`;
    const answer = await this.runModel(url, request, options);
    const outputs = (answer.body as { outputs?: unknown } | null)?.outputs;
    if (!Array.isArray(outputs)) throw unexpectedAnswer(this.deps.deploymentKey, 'model server', 'an inference response without outputs');
    return { response: JSON.stringify(answer.body) };
  }

  async health(): Promise<void> {
    await this.probe(`${this.base}/v2/health/ready`);
  }
}
