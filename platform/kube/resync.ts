import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import { API_VERSION, KINDS, LABELS, MANAGED_BY } from '../../infra/kube/constants.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import type { ScheduledTask, Scheduler } from '../../infra/process/scheduler.js';
import { secretRef, type KubeObject } from '../../infra/kube/resources.js';
import { planResync, type ResyncPlan } from '../../infra/kube/resync-plan.js';
import type { DesiredStateWriter } from '../../infra/kube/writer.js';
import { liveDesired } from './rows.js';

export interface ResyncOptions {
  intervalMs: number;
  /** Leave younger orphans alone: their creating transaction may still be open. */
  graceMs?: number;
  now?: () => number;
}

export interface ResyncReport {
  applied: number;
  deleted: number;
  unchanged: number;
  failed: number;
}

const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;

/**
 * Repairs drift between the database and the cluster: resources missing or
 * edited are applied again, resources and Secrets without a live row are
 * deleted. The database is the source of truth; every step is idempotent, so
 * several API replicas may run it at once.
 */
export class DesiredStateResync {
  private readonly task: ScheduledTask | undefined;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly kube: KubeConnection,
    private readonly writer: DesiredStateWriter,
    private readonly logger: Logger,
    private readonly options: ResyncOptions,
    scheduler: Scheduler,
  ) {
    // With an interval of 0 it never runs on its own (runOnce still does).
    this.task = options.intervalMs > 0 ? scheduler.add({ name: 'custom_resource_resync', intervalMs: options.intervalMs, run: () => this.runOnce() }) : undefined;
  }

  /** Runs now, then every interval (no-op with an interval of 0). */
  start(): void {
    this.task?.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
  }

  async runOnce(): Promise<ResyncReport> {
    const { namespace, credentialsNamespace } = this.kube;
    const api = await this.kube.api();
    const [desired, deployments, storage, secrets] = await Promise.all([
      liveDesired(this.db, this.box),
      api.list<KubeObject>(API_VERSION, KINDS.deployment.kind, namespace, { labelSelector: MANAGED }),
      api.list<KubeObject>(API_VERSION, KINDS.storage.kind, namespace, { labelSelector: MANAGED }),
      // Only Secrets this code made carry the kind label.
      api.list<KubeObject>('v1', 'Secret', credentialsNamespace, { labelSelector: `${MANAGED},${LABELS.kind}` }),
    ]);
    const now = (this.options.now ?? Date.now)();
    const plan = planResync(desired, { resources: [...deployments.items, ...storage.items], secrets: secrets.items }, this.kube, now, this.options.graceMs ?? 60_000);
    const report = await this.execute(plan);
    const log = report.applied || report.deleted || report.failed ? this.logger.info.bind(this.logger) : this.logger.debug.bind(this.logger);
    log({ ...report }, 'resync finished');
    return report;
  }

  private async execute(plan: ResyncPlan): Promise<ResyncReport> {
    const report: ResyncReport = { applied: 0, deleted: 0, unchanged: plan.unchanged, failed: 0 };
    const attempt = async (what: Record<string, unknown>, step: () => Promise<unknown>, counter: 'applied' | 'deleted') => {
      try {
        await step();
        report[counter] += 1;
      } catch (error) {
        report.failed += 1;
        this.logger.warn({ err: error, ...what }, 'resync step failed');
      }
    };
    for (const item of plan.apply) await attempt({ kind: KINDS[item.kind].kind, workspace: item.workspace, key: item.key }, () => this.writer.apply(item), 'applied');
    for (const { kind, name } of plan.deleteResources) await attempt({ kind: KINDS[kind].kind, name }, () => this.writer.removeByName(kind, name), 'deleted');
    for (const name of plan.deleteSecrets) await attempt({ secret: name }, async () => (await this.kube.api()).delete(secretRef(this.kube.credentialsNamespace, name)), 'deleted');
    return report;
  }
}

