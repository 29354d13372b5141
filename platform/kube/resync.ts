import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import { API_VERSION, KINDS, LABELS, MANAGED_BY, type ResourceKind } from '../../infra/kube/constants.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
import { secretName } from '../../infra/kube/names.js';
import { nameOf, secretRef, type KubeObject } from '../../infra/kube/resources.js';
import { planResync, type ClusterState, type Removal, type ResyncPlan } from '../../infra/kube/resync-plan.js';
import type { DesiredStateWriter } from '../../infra/kube/writer.js';
import type { Desired } from '../../infra/kube/desired.js';
import type { ClusterStateChange } from '../../features/deployments/cluster-state.js';
import type { ClusterCount, ClusterWriteObserver } from '../../features/metrics/cluster-metrics.js';
import { clusterFailure } from './failures.js';
import { clusterStores, wantedRows, type WantedRows } from './rows.js';

export interface ResyncOptions {
  /** Between passes; 0: only after changes (and at start). */
  intervalMs: number;
  /** Leave younger resources no row knows of alone: a replica of an earlier version may apply one inside a transaction still open. */
  graceMs?: number;
  now?: () => number;
}

export interface ResyncDeps {
  db: Db;
  box: SecretBox;
  kube: KubeConnection;
  writer: DesiredStateWriter;
  logger: Logger;
  scheduler: Scheduler;
  /** Subscribes to committed changes of deployments and storage configurations; returns the unsubscribe. */
  wakeups?: (wake: () => void) => () => void;
  observer?: ClusterWriteObserver;
}

export interface ResyncReport {
  applied: number;
  deleted: number;
  unchanged: number;
  failed: number;
  /** Deleted rows whose resource is not gone yet: retried on every pass. */
  removing: number;
}

const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;
/** The longest timer Node.js keeps: an interval of 0 means passes after changes only. */
const NO_INTERVAL_MS = 2_147_483_647;

/** What one pass did to each row, before it is recorded. */
interface Outcome {
  report: ResyncReport;
  changes: Array<{ kind: ResourceKind; change: ClusterStateChange }>;
}

/**
 * The one writer of the custom resources and their Secrets: it reads the
 * committed rows, applies what is missing or different, deletes what no live
 * row wants (a deleted row's resource at once, retried every pass until it is
 * gone), and records each row's `cluster_state`. Requests change rows only and
 * wake it after their commit; it also runs every interval to repair drift.
 * Every step is idempotent, so several private-server replicas may run it at once.
 */
export class DesiredStateResync {
  private readonly task: ScheduledTask;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly deps: ResyncDeps,
    private readonly options: ResyncOptions,
  ) {
    this.task = deps.scheduler.add({
      name: 'custom_resource_resync',
      intervalMs: options.intervalMs > 0 ? options.intervalMs : NO_INTERVAL_MS,
      run: () => this.runOnce(),
      afterStop: async () => this.unsubscribe?.(),
    });
  }

  /** Runs now, after every committed change, and every interval. */
  start(): void {
    this.unsubscribe ??= this.deps.wakeups?.(() => this.task.wake());
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
    this.unsubscribe = undefined;
  }

  /** One pass; throws when the cluster cannot be listed (pending rows then say so). */
  async runOnce(): Promise<ResyncReport> {
    const { db, box, kube, logger } = this.deps;
    const wanted = await wantedRows(db, box);
    let actual: ClusterState;
    try {
      actual = await this.readCluster();
    } catch (error) {
      await this.record(wanted.desired.filter((item) => wanted.rowOf.get(item)!.state.cluster_state === 'pending').map((item) => this.failedChange(wanted, item, error)));
      throw error;
    }
    const plan = planResync(wanted, actual, kube, (this.options.now ?? Date.now)(), this.options.graceMs ?? 60_000);
    const { report, changes } = await this.execute(wanted, plan);
    await this.record(changes);
    this.deps.observer?.counted(countsOf(wanted, changes));
    const log = report.applied || report.deleted || report.failed || report.removing ? logger.info.bind(logger) : logger.debug.bind(logger);
    log({ ...report }, 'resync finished');
    return report;
  }

  private async readCluster(): Promise<ClusterState> {
    const { namespace, credentialsNamespace } = this.deps.kube;
    const api = await this.deps.kube.api();
    const [deployments, storage, secrets] = await Promise.all([
      api.list<KubeObject>(API_VERSION, KINDS.deployment.kind, namespace, { labelSelector: MANAGED }),
      api.list<KubeObject>(API_VERSION, KINDS.storage.kind, namespace, { labelSelector: MANAGED }),
      // Only Secrets this code made carry the kind label.
      api.list<KubeObject>('v1', 'Secret', credentialsNamespace, { labelSelector: `${MANAGED},${LABELS.kind}` }),
    ]);
    return { resources: [...deployments.items, ...storage.items], secrets: secrets.items };
  }

  private async execute(wanted: WantedRows, plan: ResyncPlan): Promise<Outcome> {
    const { writer, kube, logger, observer } = this.deps;
    const outcome: Outcome = { report: { applied: 0, deleted: 0, unchanged: plan.inSync.length, failed: 0, removing: 0 }, changes: [] };
    const change = (item: Desired | Removal, state: ClusterStateChange['state'], failure?: { reason: ClusterStateChange['reason']; message: string }) => {
      const row = wanted.rowOf.get(item)!;
      outcome.changes.push({ kind: row.kind, change: { id: row.id, state, reason: failure?.reason ?? null, message: failure?.message ?? null, deleted: state === 'removed' } });
    };
    const failed = (kind: ResourceKind | 'secret', operation: 'apply' | 'delete', what: Record<string, unknown>, error: unknown) => {
      outcome.report.failed += 1;
      observer?.failed(kind, operation);
      logger.warn({ err: error, ...what, operation }, 'cluster write failed; retried on the next pass');
    };
    for (const item of plan.inSync) change(item, 'applied');
    for (const item of plan.apply) {
      try {
        await writer.apply(item);
        outcome.report.applied += 1;
        change(item, 'applied');
      } catch (error) {
        failed(item.kind, 'apply', { kind: KINDS[item.kind].kind, workspace: item.workspace, key: item.key }, error);
        change(item, 'failed', clusterFailure(error));
      }
    }
    for (const { kind, name } of plan.deleteResources) {
      await writer.removeByName(kind, name).then(
        () => void (outcome.report.deleted += 1),
        (error: unknown) => failed(kind, 'delete', { kind: KINDS[kind].kind, name }, error),
      );
    }
    const api = await kube.api();
    for (const name of plan.deleteSecrets) {
      await api.delete(secretRef(kube.credentialsNamespace, name)).then(
        () => void (outcome.report.deleted += 1),
        (error: unknown) => failed('secret', 'delete', { secret: name }, error),
      );
    }
    for (const item of plan.removed) change(item, 'removed');
    // A resource without a finalizer is gone at once; one being finalized waits for a later pass.
    const left = plan.removing.length ? await this.stillThere() : undefined;
    for (const item of plan.removing) {
      const name = nameOf(item);
      if (left && !left.has(`${KINDS[item.kind].kind}/${name}`) && !left.has(`Secret/${secretName(name)}`)) change(item, 'removed');
      else outcome.report.removing += 1;
    }
    return outcome;
  }

  /** Kind/name of every managed object after the deletions, listed (the API may list, never get, the Secrets); undefined when the cluster does not answer. */
  private async stillThere(): Promise<Set<string> | undefined> {
    try {
      const { resources, secrets } = await this.readCluster();
      return new Set([...resources, ...secrets].map((object) => `${object.kind}/${object.metadata.name}`));
    } catch {
      return undefined;
    }
  }

  private failedChange(wanted: WantedRows, item: Desired, error: unknown) {
    const row = wanted.rowOf.get(item)!;
    return { kind: row.kind, change: { id: row.id, state: 'failed' as const, ...clusterFailure(error), deleted: false } };
  }

  private async record(changes: Outcome['changes']): Promise<void> {
    for (const kind of ['deployment', 'storage'] as const) {
      await clusterStores[kind].record(this.deps.db, changes.filter((c) => c.kind === kind).map((c) => c.change));
    }
  }
}

/** Rows by kind and state once the pass is recorded: what the `didyma_cluster_resources` gauge shows. */
function countsOf(wanted: WantedRows, changes: Outcome['changes']): Record<ResourceKind, Record<ClusterCount, number>> {
  const counts: Record<ResourceKind, Record<ClusterCount, number>> = { deployment: { applied: 0, failed: 0, removing: 0 }, storage: { applied: 0, failed: 0, removing: 0 } };
  for (const { kind, change } of changes) if (change.state === 'applied' || change.state === 'failed') counts[kind][change.state] += 1;
  const removedIds = new Set(changes.filter((c) => c.change.state === 'removed').map((c) => `${c.kind}/${c.change.id}`));
  for (const removal of wanted.removals) {
    const row = wanted.rowOf.get(removal)!;
    if (!removedIds.has(`${row.kind}/${row.id}`)) counts[row.kind].removing += 1;
  }
  return counts;
}
