import { namespaceOpenTo, type KServeAccess } from './access.js';
import { readinessOf, type Component } from './inference-service.js';

export interface KServeServingState {
  ready: boolean;
  not_ready_reason?: string;
  latest_ready_revision?: string;
}

/**
 * The state now of the service a registration recorded as `registry`
 * (`describe`'s record), from the process's shared informer of its namespace:
 * undefined for another platform's record, a namespace closed to `workspace`,
 * or a watch that cannot start (the caller shows the recorded state alone).
 */
export async function kserveServingState(access: KServeAccess, workspace: string, registry: Record<string, unknown>): Promise<KServeServingState | undefined> {
  const { platform, namespace, name, component } = registry;
  if (platform !== 'kserve' || typeof namespace !== 'string' || typeof name !== 'string' || !namespaceOpenTo(access.grants, workspace, namespace)) return undefined;
  const service = await access.cached(namespace, name).catch(() => null);
  if (service === null) return undefined;
  if (!service) return { ready: false, not_ready_reason: `InferenceService ${namespace}/${name} does not exist` };
  const own: Component = component === 'explainer' ? 'explainer' : 'predictor';
  const { ready, reason } = readinessOf(service, own);
  const revision = service.status?.components?.[own]?.latestReadyRevision;
  return { ready, ...(reason ? { not_ready_reason: reason } : {}), ...(revision ? { latest_ready_revision: revision } : {}) };
}
