import type { Logger } from 'pino';
import type { ResourceKind } from '../../infra/kube/constants.js';
import type { Desired } from '../../infra/kube/desired.js';
import type { Removal } from '../../infra/kube/resync-plan.js';
import type { ClusterReason, ClusterState, ClusterStateChange } from '../../features/deployments/cluster-state.js';
import type { ClusterCount, ClusterWriteObserver } from '../../features/metrics/cluster-metrics.js';
import type { RowRef } from './rows.js';

export interface ResyncReport {
  applied: number;
  deleted: number;
  unchanged: number;
  failed: number;
  /** Deleted rows whose resource is not gone yet: retried on every pass. */
  removing: number;
}

/** A state change of one row, with the table it belongs to. */
export interface RowChange {
  kind: ResourceKind;
  change: ClusterStateChange;
}

/** What one pass of the reconciler did: its report, and the state it found for each row it settled. */
export class Pass {
  readonly report: ResyncReport;
  readonly changes: RowChange[] = [];

  constructor(
    private readonly rowOf: ReadonlyMap<Desired | Removal, RowRef>,
    private readonly logger: Logger,
    private readonly observer: ClusterWriteObserver | undefined,
    unchanged: number,
  ) {
    this.report = { applied: 0, deleted: 0, unchanged, failed: 0, removing: 0 };
  }

  settled(item: Desired | Removal, state: ClusterState, failure?: { reason: ClusterReason; message: string }): void {
    this.changes.push(changeOf(this.rowOf.get(item)!, state, failure));
  }

  /** A write the cluster refused: logged (never with a credential), counted, retried on the next pass. */
  refused(kind: ResourceKind, operation: 'apply' | 'delete', what: Record<string, unknown>, error: unknown): void {
    this.report.failed += 1;
    this.observer?.failed(kind, operation);
    this.logger.warn({ err: error, ...what, operation }, 'cluster write failed; retried on the next pass');
  }

  /** Rows by kind and state once the pass is recorded: what the `didyma_cluster_resources` gauge shows. */
  counts(removals: readonly Removal[]): Record<ResourceKind, Record<ClusterCount, number>> {
    const counts: Record<ResourceKind, Record<ClusterCount, number>> = { deployment: { applied: 0, failed: 0, removing: 0 }, storage: { applied: 0, failed: 0, removing: 0 } };
    for (const { kind, change } of this.changes) if (change.state === 'applied' || change.state === 'failed') counts[kind][change.state] += 1;
    const removed = new Set(this.changes.filter((c) => c.change.state === 'removed').map((c) => `${c.kind}/${c.change.id}`));
    for (const removal of removals) {
      const row = this.rowOf.get(removal)!;
      if (!removed.has(`${row.kind}/${row.id}`)) counts[row.kind].removing += 1;
    }
    return counts;
  }
}

export function changeOf(row: RowRef, state: ClusterState, failure?: { reason: ClusterReason; message: string }): RowChange {
  return { kind: row.kind, change: { id: row.id, state, reason: failure?.reason ?? null, message: failure?.message ?? null, deleted: state === 'removed' } };
}
