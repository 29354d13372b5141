import { callUpstream, unexpectedAnswer, UpstreamError } from '../errors.js';
import { segment } from '../init.js';
import { toInferenceRequest, withContext } from '../open-inference/tensors.js';
import type { CallOptions, ConnectorDeps, ConnectorInit, InferenceInput, InferenceOutput, ServerProxy } from '../types.js';
import type { KServeAccess } from './access.js';
import { explainerUrlOf, explains, predictorUrlOf, protocolOf, readinessOf, targetOf, type Component, type InferenceService } from './inference-service.js';
import { protocol, validateKServeInit } from './init.js';
import { DeploymentNamespaces } from './namespaces.js';
import { toV1Request } from './v1.js';

export const KSERVE_PROXY_CLASS = 'didyma.proxy.KServeServerProxy';

/**
 * Runs a model on the predictor of the InferenceService named after it,
 * whose address is read at each call from the process's shared informer:
 * a new revision, or a new address, needs nothing of didyma. Speaks the Open
 * Inference Protocol (v2), or KServe's v1 when the init or the service says.
 * A model named `<service>.explainer` asks the service's explainer (v1
 * `:explain`, as KServe's explainers answer). The URL goes through the
 * platform's outbound policy like any other.
 */
export class KServeServerProxy implements ServerProxy {
  private readonly namespaces: DeploymentNamespaces;
  private readonly protocol: string | undefined;

  constructor(
    access: KServeAccess,
    init: ConnectorInit,
    private readonly deps: ConnectorDeps,
  ) {
    this.namespaces = new DeploymentNamespaces(access, init, deps, 'model server');
    this.protocol = init.protocol;
  }

  static validateInit(access: KServeAccess | undefined, init: unknown, field: string, workspace?: string): ConnectorInit {
    return validateKServeInit(init, field, KSERVE_PROXY_CLASS, { protocol }, access, workspace);
  }

  async infer(input: InferenceInput, options: CallOptions = {}): Promise<InferenceOutput> {
    const target = targetOf(input.modelCode);
    const service = await this.readyService(target.name, target.component);
    if (target.component === 'explainer') return this.explain(service, input, options);
    const base = predictorUrlOf(service)!;
    const name = segment(service.metadata.name);
    const v1 = protocolOf(service, this.protocol) === 'v1';
    const url = v1 ? `${base}/v1/models/${name}:predict` : `${base}/v2/models/${name}/infer`;
    const json = v1 ? toV1Request(input.body, input.context) : withContext(toInferenceRequest(input.body), input.context);
    const answer = await callUpstream(this.deps.deploymentKey, 'model server', () => this.deps.http.request({ method: 'POST', url, json, idempotent: false, signal: options.signal }));
    const body = answer.body as Record<string, unknown> | null;
    if (!Array.isArray(v1 ? body?.predictions : body?.outputs)) throw unexpectedAnswer(this.deps.deploymentKey, 'model server', v1 ? 'a v1 response without predictions' : 'an inference response without outputs');
    return { response: JSON.stringify(body) };
  }

  /** v1 `:explain` on the explainer's address, the explained request as instances and the exchange in `context`. */
  private async explain(service: InferenceService, input: InferenceInput, options: CallOptions): Promise<InferenceOutput> {
    const url = `${explainerUrlOf(service)!}/v1/models/${segment(service.metadata.name)}:explain`;
    const json = toV1Request(input.body, input.context);
    const answer = await callUpstream(this.deps.deploymentKey, 'model server', () => this.deps.http.request({ method: 'POST', url, json, idempotent: false, signal: options.signal }));
    if (typeof answer.body !== 'object' || answer.body === null) throw unexpectedAnswer(this.deps.deploymentKey, 'model server', 'an explanation that is not a JSON object');
    return { response: JSON.stringify(answer.body) };
  }

  /** The namespaces can be watched: the model servers themselves are asked at each call. */
  async health(): Promise<void> {
    await this.namespaces.list();
  }

  /** The service, ready and addressed for `component`; anything else is worth retrying once KServe has caught up. */
  private async readyService(name: string, component: Component): Promise<InferenceService> {
    const service = await this.namespaces.find(name);
    const key = this.deps.deploymentKey;
    if (!service) throw notServing(key, `no InferenceService named ${name} in its namespaces`);
    const where = `InferenceService ${service.metadata.namespace}/${service.metadata.name}`;
    if (component === 'explainer' && !explains(service, this.protocol)) throw notServing(key, `${where} has no explainer (and its predictor does not speak v1)`);
    const { ready, reason } = readinessOf(service, component);
    if (!ready) throw notServing(key, `${where} is not ready: ${reason}`);
    const url = component === 'explainer' ? explainerUrlOf(service) : predictorUrlOf(service);
    if (!url) throw notServing(key, `${where} has no ${component} address in its status yet`);
    return service;
  }
}

/** Fails fast, and retried as an unreachable server is: the service may come (back) at any time. */
function notServing(deploymentKey: string, why: string): UpstreamError {
  return new UpstreamError(deploymentKey, `Deployment "${deploymentKey}": ${why}.`, true, undefined, undefined, undefined, 'unreachable');
}
