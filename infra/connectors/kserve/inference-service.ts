import type { KubeObject } from '../../kube/resources.js';

// What didyma reads of a KServe InferenceService (serving.kserve.io/v1beta1):
// pure functions of the object, written from KServe's documented status.

export const KSERVE_API_VERSION = 'serving.kserve.io/v1beta1';
export const INFERENCE_SERVICE_KIND = 'InferenceService';
/** An annotation naming the one didyma version a service answers to; without it, any version name the supervisor gives. */
export const VERSION_ANNOTATION = 'didyma.io/version';

/**
 * A model code naming a service's explainer rather than its predictor:
 * `iris.explainer`. KServe names services as DNS labels, which hold no dot,
 * so no service's own name reads as one.
 */
export const EXPLAINER_SUFFIX = '.explainer';

/** Which of a service's components a model code names. */
export type Component = 'predictor' | 'explainer';

export type Protocol = 'v1' | 'v2';
export const PROTOCOLS: readonly Protocol[] = ['v1', 'v2'];

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface Addressed {
  url?: string;
  address?: { url?: string };
}

interface ComponentStatus extends Addressed {
  latestReadyRevision?: string;
  latestCreatedRevision?: string;
}

export interface InferenceService extends KubeObject {
  spec?: { predictor?: { protocolVersion?: string; model?: { protocolVersion?: string } }; explainer?: Record<string, unknown> };
  status?: Addressed & { conditions?: Condition[]; components?: { predictor?: ComponentStatus; explainer?: ComponentStatus }; modelStatus?: Record<string, unknown> };
}

/** The service and the component a model code names: `iris` the predictor of `iris`, `iris.explainer` its explainer. */
export function targetOf(modelCode: string): { name: string; component: Component } {
  return modelCode.endsWith(EXPLAINER_SUFFIX) ? { name: modelCode.slice(0, -EXPLAINER_SUFFIX.length), component: 'explainer' } : { name: modelCode, component: 'predictor' };
}

export interface Readiness {
  ready: boolean;
  /** Why not, in words an operator reads: the first failing condition's reason and message. */
  reason?: string;
}

/**
 * Ready when both the component's condition (`PredictorReady`,
 * `ExplainerReady`) and `Ready` are True: a service KServe has not reported
 * on is not ready. An explainer the predictor serves (v1 `:explain`) is the
 * predictor's.
 */
export function readinessOf(service: InferenceService, component: Component = 'predictor'): Readiness {
  const conditions = service.status?.conditions ?? [];
  const own = component === 'explainer' && hasExplainer(service) ? 'ExplainerReady' : 'PredictorReady';
  // The component's own condition first: its reason says more than the aggregate's.
  for (const type of [own, 'Ready']) {
    const found = conditions.find((c) => c.type === type);
    if (found?.status !== 'True') {
      const why = found ? [found.reason, found.message].filter(Boolean).join(': ') : 'not reported yet';
      return { ready: false, reason: `${type} is ${found?.status ?? 'Unknown'}${why ? ` (${why})` : ''}` };
    }
  }
  return { ready: true };
}

/**
 * Where the predictor answers: its in-cluster address, else its URL, else the
 * service's own (a service with a single predictor routes to it).
 */
export function predictorUrlOf(service: InferenceService): string | undefined {
  const status = service.status;
  const predictor = status?.components?.predictor;
  const url = predictor?.address?.url || predictor?.url || status?.address?.url || status?.url;
  return url ? url.replace(/\/+$/, '') : undefined;
}

/** Whether the service declares an explainer component, or KServe reports one. */
export function hasExplainer(service: InferenceService): boolean {
  return Boolean(service.spec?.explainer || service.status?.components?.explainer);
}

/** Whether `:explain` can be asked of the service: its explainer component's, or its v1 predictor's. */
export function explains(service: InferenceService, chosenProtocol?: string): boolean {
  return hasExplainer(service) || protocolOf(service, chosenProtocol) === 'v1';
}

/** Where the service's explanations are asked: its explainer component's address, else (v1) its predictor's. */
export function explainerUrlOf(service: InferenceService): string | undefined {
  if (!hasExplainer(service)) return predictorUrlOf(service);
  const explainer = service.status?.components?.explainer;
  const url = explainer?.address?.url || explainer?.url;
  return url ? url.replace(/\/+$/, '') : undefined;
}

/** The protocol to speak: the deployment's choice, else the predictor's `protocolVersion`, else v2 (Open Inference). */
export function protocolOf(service: InferenceService, chosen?: string): Protocol {
  if (chosen === 'v1' || chosen === 'v2') return chosen;
  const declared = service.spec?.predictor?.model?.protocolVersion ?? service.spec?.predictor?.protocolVersion;
  return declared === 'v1' ? 'v1' : 'v2';
}

/** Whether registering (model_code = the service's name, `version`) names this service. */
export function answersToVersion(service: InferenceService, version: string): boolean {
  const pinned = service.metadata.annotations?.[VERSION_ANNOTATION];
  return pinned === undefined || pinned === version;
}

/** The predictor's latest ready revision, when the service is ready: what `versioning: revision` names a version after. */
export function readyRevisionOf(service: InferenceService): string | undefined {
  return readinessOf(service).ready ? service.status?.components?.predictor?.latestReadyRevision : undefined;
}

/** The revision a registration recorded in `native_metadata.registry` (see `describe`). */
export function revisionRecordedIn(registry: unknown): string | undefined {
  const recorded = (registry as Record<string, unknown> | undefined)?.latest_ready_revision;
  return typeof recorded === 'string' ? recorded : undefined;
}

/** What the registry connector records of a service's component at registration (native_metadata.registry). */
export function describe(service: InferenceService, component: Component = 'predictor'): Record<string, unknown> {
  const { ready, reason } = readinessOf(service, component);
  const own = service.status?.components?.[component];
  return {
    name: service.metadata.name,
    namespace: service.metadata.namespace,
    platform: 'kserve',
    component,
    ready,
    ...(reason ? { not_ready_reason: reason } : {}),
    protocol: component === 'explainer' ? 'v1' : protocolOf(service),
    ...(own?.latestReadyRevision ? { latest_ready_revision: own.latestReadyRevision } : {}),
    ...(service.metadata.annotations?.[VERSION_ANNOTATION] ? { version: service.metadata.annotations[VERSION_ANNOTATION] } : {}),
  };
}

/** The service's component as a model offered for registration, with the host its calls go to. */
export function offerOf(service: InferenceService, component: Component): { model_code: string; version: string | null; registry: Record<string, unknown> } {
  const url = component === 'explainer' ? explainerUrlOf(service) : predictorUrlOf(service);
  const host = url && hostOf(url);
  return {
    model_code: component === 'explainer' ? `${service.metadata.name}${EXPLAINER_SUFFIX}` : service.metadata.name,
    version: service.metadata.annotations?.[VERSION_ANNOTATION] ?? null,
    registry: { ...describe(service, component), ...(host ? { host } : {}) },
  };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
