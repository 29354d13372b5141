import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import { API_VERSION, KINDS, LABELS, MANAGED_BY } from '../../infra/kube/constants.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
import { nameOf, type KubeObject } from '../../infra/kube/resources.js';
import { planResync, type ClusterState, type ResyncPlan } from '../../infra/kube/resync-plan.js';
import type { DesiredStateWriter } from '../../infra/kube/writer.js';
import type { Desired } from '../../infra/kube/desired.js';
import type { ClusterWriteObserver } from '../../features/metrics/cluster-metrics.js';
import { clusterFailure } from './failures.js';
import { changeOf, Pass, type ResyncReport, type RowChange } from './pass.js';
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

const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;
/** The longest timer Node.js keeps: an interval of 0 means passes after changes only. */
export const NO_INTERVAL_MS = 2_147_483_647;
/** The first and the longest wait before a pass that retries what the last one left failed or still being removed. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

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
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = 0;

  constructor(
    private readonly deps: ResyncDeps,
    private readonly options: ResyncOptions,
  ) {
    this.task = deps.scheduler.add({
      name: 'custom_resource_resync',
      intervalMs: options.intervalMs > 0 ? options.intervalMs : NO_INTERVAL_MS,
      run: () => this.scheduledPass(),
      afterStop: async () => {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
        clearTimeout(this.retryTimer);
      },
    });
  }

  /** Runs now, after every committed change, and every interval. */
  start(): void {
    this.unsubscribe ??= this.deps.wakeups?.(() => this.task.wake());
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }

  /**
   * A pass of the schedule. What it leaves failed or still being removed (a
   * finalizer holds it) is retried after 1 s, doubled up to 30 s, rather than
   * at the next interval, which is minutes or never; a pass that could not
   * read the cluster is retried the same way.
   */
  private async scheduledPass(): Promise<void> {
    let unfinished = true;
    try {
      const report = await this.runOnce();
      unfinished = report.failed > 0 || report.removing > 0;
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'resync could not read the cluster; retried soon');
    }
    clearTimeout(this.retryTimer);
    this.retryMs = unfinished ? Math.min(Math.max(RETRY_FIRST_MS, this.retryMs * 2), RETRY_MAX_MS) : 0;
    if (unfinished) this.retryTimer = setTimeout(() => this.task.wake(), this.retryMs).unref();
  }

  /** One pass; throws when the cluster cannot be listed (pending rows then say so). */
  async runOnce(): Promise<ResyncReport> {
    const { db, box, kube, logger } = this.deps;
    const wanted = await wantedRows(db, box);
    let actual: ClusterState;
    try {
      actual = await this.readCluster();
    } catch (error) {
      const pending = wanted.desired.map((item) => wanted.rowOf.get(item)!).filter((row) => row.state.cluster_state === 'pending');
      await this.record(pending.map((row) => changeOf(row, 'failed', clusterFailure(error))));
      throw error;
    }
    const plan = planResync(wanted, actual, kube, (this.options.now ?? Date.now)(), this.options.graceMs ?? 60_000);
    const pass = await this.execute(wanted, plan);
    await this.record(pass.changes);
    this.deps.observer?.counted(pass.counts(wanted.removals));
    const { report } = pass;
    const log = report.applied || report.deleted || report.failed || report.removing ? logger.info.bind(logger) : logger.debug.bind(logger);
    log({ ...report }, 'resync finished');
    return report;
  }

  /** The managed custom resources; never the Secrets, which the API may write but not read. */
  private async readCluster(): Promise<ClusterState> {
    const api = await this.deps.kube.api();
    const [deployments, storage] = await Promise.all([
      api.list<KubeObject>(API_VERSION, KINDS.deployment.kind, this.deps.kube.namespace, { labelSelector: MANAGED }),
      api.list<KubeObject>(API_VERSION, KINDS.storage.kind, this.deps.kube.namespace, { labelSelector: MANAGED }),
    ]);
    return { resources: [...deployments.items, ...storage.items] };
  }

  private async execute(wanted: WantedRows, plan: ResyncPlan): Promise<Pass> {
    const pass = new Pass(wanted.rowOf, this.deps.logger, this.deps.observer, plan.inSync.length);
    for (const item of plan.inSync) pass.settled(item, 'applied');
    for (const item of plan.apply) await this.apply(item, pass);
    await this.deleteUnwanted(plan, pass);
    // A removal is done once its resource is gone (the operator's finalizer deleted its Secrets); one being finalized waits for a later pass.
    const left = plan.removing.length ? await this.stillThere() : undefined;
    for (const item of [...plan.removed, ...plan.removing]) {
      const name = nameOf(item);
      const gone = plan.removed.includes(item) || (left !== undefined && !left.has(`${KINDS[item.kind].kind}/${name}`));
      if (gone) pass.settled(item, 'removed');
      else pass.report.removing += 1;
    }
    return pass;
  }

  private async apply(item: Desired, pass: Pass): Promise<void> {
    try {
      await this.deps.writer.apply(item);
      pass.report.applied += 1;
      pass.settled(item, 'applied');
    } catch (error) {
      pass.refused(item.kind, 'apply', { kind: KINDS[item.kind].kind, workspace: item.workspace, key: item.key }, error);
      pass.settled(item, 'failed', clusterFailure(error));
    }
  }

  /** Deletes the resources the plan says; a refused deletion stays a removal in progress. */
  private async deleteUnwanted(plan: ResyncPlan, pass: Pass): Promise<void> {
    const deleted = () => void (pass.report.deleted += 1);
    for (const { kind, name } of plan.deleteResources) {
      await this.deps.writer.removeByName(kind, name).then(deleted, (error: unknown) => pass.refused(kind, 'delete', { kind: KINDS[kind].kind, name }, error));
    }
  }

  /** Kind/name of every managed resource after the deletions; undefined when the cluster does not answer. */
  private async stillThere(): Promise<Set<string> | undefined> {
    try {
      const { resources } = await this.readCluster();
      return new Set(resources.map((object) => `${object.kind}/${object.metadata.name}`));
    } catch {
      return undefined;
    }
  }

  private async record(changes: readonly RowChange[]): Promise<void> {
    for (const kind of ['deployment', 'storage'] as const) {
      await clusterStores[kind].record(this.deps.db, changes.filter((c) => c.kind === kind).map((c) => c.change));
    }
  }
}
