import type { UrlPolicy } from '../../net/url-policy.js';
import { callUpstream } from '../errors.js';
import { validateInit, type InitSpec } from '../init.js';
import type { ConnectorDeps, ConnectorInit, InferenceInput, InferenceOutput, ServerProxy } from '../types.js';
import { toScoringPayload, withContext } from './payload.js';

export const MLFLOW_PROXY_SPEC: InitSpec = {
  className: 'modelplane.proxy.MlflowServerProxy',
  urls: ['server_proxy_url'],
  secrets: ['server_proxy_pat'],
};

/**
 * Runs a model on an MLflow scoring server (`mlflow models serve`). Such a
 * server serves one model, so the model code and version select nothing here;
 * the registry connector has already checked that the deployment knows them.
 */
export class MlflowServerProxy implements ServerProxy {
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
    return validateInit(init, field, MLFLOW_PROXY_SPEC, policy);
  }

  async infer(input: InferenceInput): Promise<InferenceOutput> {
    const payload = withContext(toScoringPayload(input.body), input.context);
    // Not idempotent: a retry after the server may have run the model would run it twice.
    const answer = await callUpstream(this.deps.deploymentKey, 'model server', () =>
      this.deps.http.request({ method: 'POST', url: `${this.base}/invocations`, json: payload, token: this.token, idempotent: false }),
    );
    return { response: JSON.stringify(answer.body) };
  }

  async health(): Promise<void> {
    await callUpstream(this.deps.deploymentKey, 'model server', () => this.deps.http.request({ method: 'GET', url: `${this.base}/ping`, token: this.token }));
  }
}
