import type { KubeObject } from '../../kube/resources.js';

// What didyma reads of a KServe InferenceService (serving.kserve.io/v1beta1):
// pure functions of the object, written from KServe's documented status.

export const KSERVE_API_VERSION = 'serving.kserve.io/v1beta1';
export const INFERENCE_SERVICE_KIND = 'InferenceService';
/** An annotation naming the one didyma version a service answers to; without it, any version name the supervisor gives. */
export const VERSION_ANNOTATION = 'didyma.io/version';

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
  spec?: { predictor?: { protocolVersion?: string; model?: { protocolVersion?: string } } };
  status?: Addressed & { conditions?: Condition[]; components?: { predictor?: ComponentStatus }; modelStatus?: Record<string, unknown> };
}

export interface Readiness {
  ready: boolean;
  /** Why not, in words an operator reads: the first failing condition's reason and message. */
  reason?: string;
}

// The predictor's own condition first: its reason says more than the aggregate's.
const READY_CONDITIONS = ['PredictorReady', 'Ready'];

/** Ready when both `PredictorReady` and `Ready` are True: a service KServe has not reported on is not ready. */
export function readinessOf(service: InferenceService): Readiness {
  const conditions = service.status?.conditions ?? [];
  for (const type of READY_CONDITIONS) {
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

/** What the registry connector records of a service at registration (native_metadata.registry). */
export function describe(service: InferenceService, chosenProtocol?: string): Record<string, unknown> {
  const { ready, reason } = readinessOf(service);
  const predictor = service.status?.components?.predictor;
  return {
    name: service.metadata.name,
    namespace: service.metadata.namespace,
    platform: 'kserve',
    ready,
    ...(reason ? { not_ready_reason: reason } : {}),
    protocol: protocolOf(service, chosenProtocol),
    ...(predictor?.latestReadyRevision ? { latest_ready_revision: predictor.latestReadyRevision } : {}),
    ...(service.metadata.annotations?.[VERSION_ANNOTATION] ? { version: service.metadata.annotations[VERSION_ANNOTATION] } : {}),
  };
}
