import { UnavailableError } from '../../kernel/errors/errors.js';
import { statusOf } from '../../infra/kube/errors.js';
import type { ClusterReason } from '../../features/deployments/cluster-state.js';

/** Why a cluster write failed, as a row records it: a code and words without the cause's details (URLs, bodies). */
export function clusterFailure(error: unknown): { reason: ClusterReason; message: string } {
  // The writer's refusal to apply over a resource still being finalized.
  if (error instanceof UnavailableError) return { reason: 'still_being_removed', message: error.message };
  const status = statusOf(error);
  if (status !== undefined) return { reason: 'cluster_error', message: `The Kubernetes API refused the write (HTTP ${status}); it is retried on every pass.` };
  return { reason: 'cluster_unreachable', message: 'The Kubernetes API did not answer; the write is retried on every pass.' };
}
