import { callUpstream } from './errors.js';
import type { CallOptions, ConnectorDeps, ConnectorInit, InferenceInput, InferenceOutput, ServerProxy } from './types.js';

/** What the built-in proxies share: the server URL, its optional bearer token, and how they call it. */
export abstract class HttpServerProxy implements ServerProxy {
  protected readonly base: string;
  protected readonly token: string | undefined;

  constructor(
    init: ConnectorInit,
    protected readonly deps: ConnectorDeps,
  ) {
    this.base = init.server_proxy_url as string;
    this.token = init.server_proxy_pat;
  }

  abstract infer(input: InferenceInput, options?: CallOptions): Promise<InferenceOutput>;
  abstract health(): Promise<void>;

  /** One inference call. Not idempotent: a retry after the server may have run the model would run it twice. */
  protected runModel(url: string, json: unknown, options: CallOptions = {}) {
    return callUpstream(this.deps.deploymentKey, 'model server', () => this.deps.http.request({ method: 'POST', url, json, token: this.token, idempotent: false, signal: options.signal }));
  }

  protected async probe(url: string): Promise<void> {
    await callUpstream(this.deps.deploymentKey, 'model server', () => this.deps.http.request({ method: 'GET', url, token: this.token }));
  }
}
