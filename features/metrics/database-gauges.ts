import { Gauge, Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Db, Runner } from '../../infra/db/database.js';
import { metricNames } from './names.js';
import type { InvocationsStore, SessionCount } from '../invocations/store.js';
import type { DeploymentsStore } from '../deployments/store.js';
import type { ModelsStore } from '../models/store.js';

/** The stores the gauges read, one figure each. */
export interface GaugeStores {
  sessions: { sessionCounts(db: Runner): Promise<SessionCount[]> };
  deployments: Pick<DeploymentsStore, 'countsByClass'>;
  models: Pick<ModelsStore, 'liveEverywhere'>;
  invocations: Pick<InvocationsStore, 'workloadCounts'>;
}

/**
 * Sessions, deployments, models, and the invocations waiting and running (per
 * workspace, and per model version), as
 * the database counts them, read afresh on every scrape. Only the private
 * server serves them (see docs/decisions.md): counted by the database, the
 * figures are right however many API replicas and executors run, where
 * per-process counters would each see only their own part.
 */
export class DatabaseGauges {
  readonly registry = new Registry();
  private readonly up = new Gauge({ name: metricNames.databaseUp, help: '1 when the last scrape read the database figures, 0 when it could not.', registers: [this.registry] });
  private readonly sessions = new Gauge({
    name: metricNames.sessions,
    help: 'Sessions by state (OPEN, CLOSED).',
    labelNames: ['workspace', 'model_code', 'model_version', 'user_id', 'state'] as const,
    registers: [this.registry],
  });
  private readonly deployments = new Gauge({
    name: metricNames.deployments,
    help: 'Live deployments by server proxy class and registry connector class.',
    labelNames: ['workspace', 'proxy_class', 'connector_class'] as const,
    registers: [this.registry],
  });
  private readonly models = new Gauge({
    name: metricNames.models,
    help: '1 for every live registered model version (explainers included).',
    labelNames: ['workspace', 'model_code', 'model_version'] as const,
    registers: [this.registry],
  });

  private readonly queued = new Gauge({
    name: metricNames.queuedInvocations,
    help: 'Invocations waiting to run (QUEUED, retries in backoff included).',
    labelNames: ['workspace'] as const,
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: metricNames.inFlightInvocations,
    help: 'Invocations claimed by an executor and not finished (IN_PROGRESS): the model calls in flight.',
    labelNames: ['workspace'] as const,
    registers: [this.registry],
  });
  // The same counts per model version; the per-workspace ones above stay, as autoscalers' rules read them as they are.
  private readonly modelQueued = new Gauge({
    name: metricNames.modelQueuedInvocations,
    help: 'Invocations waiting to run (QUEUED, retries in backoff included), by model version.',
    labelNames: ['workspace', 'model_code', 'model_version'] as const,
    registers: [this.registry],
  });
  private readonly modelInFlight = new Gauge({
    name: metricNames.modelInFlightInvocations,
    help: 'Invocations claimed by an executor and not finished (IN_PROGRESS), by model version.',
    labelNames: ['workspace', 'model_code', 'model_version'] as const,
    registers: [this.registry],
  });

  constructor(
    private readonly db: Db,
    private readonly stores: GaugeStores,
    private readonly logger: Logger,
  ) {}

  /**
   * Reads the figures, then replaces the gauges' series in one
   * synchronous step, so series whose count fell to zero disappear and a
   * concurrent scrape never sees half of an update. On a database failure the
   * series are dropped (no stale numbers) and `database_metrics_up` says 0.
   */
  async refresh(): Promise<void> {
    const figures = await this.read();
    for (const gauge of [this.sessions, this.deployments, this.models, this.queued, this.inFlight, this.modelQueued, this.modelInFlight]) gauge.reset();
    this.up.set(figures ? 1 : 0);
    if (!figures) return;
    const [sessions, deployments, models, workload] = figures;
    for (const s of sessions) this.sessions.set({ workspace: s.workspace, model_code: s.model_code, model_version: s.model_version, user_id: String(s.user_id), state: s.state }, Number(s.n));
    for (const d of deployments) this.deployments.set({ workspace: d.workspace, proxy_class: d.proxy_class, connector_class: d.connector_class }, Number(d.n));
    for (const m of models) this.models.set({ workspace: m.workspace, model_code: m.model_code, model_version: m.model_version }, 1);
    for (const w of workload) {
      const queued = w.status === 'QUEUED';
      (queued ? this.modelQueued : this.modelInFlight).set({ workspace: w.workspace, model_code: w.model_code, model_version: w.model_version }, Number(w.n));
      (queued ? this.queued : this.inFlight).inc({ workspace: w.workspace }, Number(w.n));
    }
  }

  private read() {
    const { sessions, deployments, models, invocations } = this.stores;
    return Promise.all([sessions.sessionCounts(this.db), deployments.countsByClass(this.db), models.liveEverywhere(this.db), invocations.workloadCounts(this.db)]).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'could not read the database figures for /metrics');
      return null;
    });
  }
}
