import { explains, readinessOf, type Component, type InferenceService } from './inference-service.js';

/** A component's state as a model's page shows it (`serving`). */
export interface KServeServingState {
  ready: boolean;
  not_ready_reason?: string;
  latest_ready_revision?: string;
}

/** The state now of each component a model code can name: the predictor, and the explainer of a service that explains. */
export function componentStates(service: InferenceService): Partial<Record<Component, KServeServingState>> {
  const components: Component[] = explains(service) ? ['predictor', 'explainer'] : ['predictor'];
  return Object.fromEntries(components.map((component) => [component, stateOf(service, component)]));
}

function stateOf(service: InferenceService, component: Component): KServeServingState {
  const { ready, reason } = readinessOf(service, component);
  const revision = service.status?.components?.[component]?.latestReadyRevision;
  return { ready, ...(reason ? { not_ready_reason: reason } : {}), ...(revision ? { latest_ready_revision: revision } : {}) };
}
