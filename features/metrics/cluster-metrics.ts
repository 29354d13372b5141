import { Counter, Gauge, Registry } from 'prom-client';
import { metricNames } from './names.js';

export type ClusterKind = 'deployment' | 'storage';
/** A live row applied or failed, or a deleted row whose resource is not gone yet. */
export type ClusterCount = 'applied' | 'failed' | 'removing';

/** What the reconciler of the custom resources reports: each refused write, and the rows' states after each pass. */
export interface ClusterWriteObserver {
  failed(kind: ClusterKind, operation: 'apply' | 'delete'): void;
  counted(counts: Record<ClusterKind, Record<ClusterCount, number>>): void;
}

/** The private server's figures of the cluster writes (Kubernetes mode; nothing moves without a cluster). */
export class ClusterWriteMetrics implements ClusterWriteObserver {
  readonly registry = new Registry();
  private readonly failures = new Counter({
    name: metricNames.clusterWriteFailures,
    help: 'Writes of custom resources and their Secrets the Kubernetes API refused or did not answer, by kind of resource (deployment, storage) and operation (apply, delete); each is retried on the next pass.',
    labelNames: ['kind', 'operation'] as const,
    registers: [this.registry],
  });
  private readonly resources = new Gauge({
    name: metricNames.clusterResources,
    help: 'Deployments and storage configurations by the state of their custom resource after the last pass of the reconciler: applied, failed, or removing (deleted, resource not gone yet).',
    labelNames: ['kind', 'state'] as const,
    registers: [this.registry],
  });

  failed(kind: ClusterKind, operation: 'apply' | 'delete'): void {
    this.failures.inc({ kind, operation });
  }

  counted(counts: Record<ClusterKind, Record<ClusterCount, number>>): void {
    for (const [kind, byState] of Object.entries(counts)) for (const [state, n] of Object.entries(byState)) this.resources.set({ kind, state }, n);
  }
}
