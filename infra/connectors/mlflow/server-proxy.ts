import type { UrlPolicy } from '../../net/url-policy.js';
import { HttpServerProxy } from '../http-server-proxy.js';
import { validateInit, type InitSpec } from '../init.js';
import type { CallOptions, ConnectorInit, InferenceInput, InferenceOutput } from '../types.js';
import { toScoringPayload, withContext } from './payload.js';

export const MLFLOW_PROXY_SPEC: InitSpec = {
  className: 'didyma.proxy.MlflowServerProxy',
  urls: ['server_proxy_url'],
  secrets: ['server_proxy_pat'],
};

/**
 * Runs a model on an MLflow scoring server (`mlflow models serve`). Such a
 * server serves one model, so the model code and version select nothing here;
 * the registry connector has already checked that the deployment knows them.
 */
export class MlflowServerProxy extends HttpServerProxy {
  static validateInit(init: unknown, field: string, policy: UrlPolicy): ConnectorInit {
    return validateInit(init, field, MLFLOW_PROXY_SPEC, policy);
  }

  async infer(input: InferenceInput, options: CallOptions = {}): Promise<InferenceOutput> {
    const payload = withContext(toScoringPayload(input.body), input.context);
    const answer = await this.runModel(`${this.base}/invocations`, payload, options);
    return { response: JSON.stringify(answer.body) };
  }

  async health(): Promise<void> {
    await this.probe(`${this.base}/ping`);
  }
}
