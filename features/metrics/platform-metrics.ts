import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { WorkspacesStore } from '../identity/workspaces.store.js';
import { DatabaseGauges, type GaugeStores } from './database-gauges.js';
import { metricsHandler, type MetricsHandler, type MetricsPart } from '../../infra/http/metrics-exposition.js';
import { InvocationMetrics } from './invocation-metrics.js';
import { processRegistry } from './process-registry.js';
import { databasePoolRegistry } from './pool-metrics.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { auditRegistry } from './audit-metrics.js';
import { shadowRegistry } from './shadow-metrics.js';
import type { ShadowDispatch } from '../invocations/shadows.js';
import { BackgroundTaskMetrics } from './background-metrics.js';
import { ClusterWriteMetrics } from './cluster-metrics.js';
import { LeaseMetrics } from './lease-metrics.js';
import type { AuditTrail } from '../audit/trail.js';
import type { ModelsStore } from '../models/store.js';

/** The processes that serve a `/metrics`. */
export type MetricsComponent = 'auth' | 'private' | 'public' | 'executor' | 'operator';

export interface PlatformMetrics {
  /** Fed by the executor's `onFinished` hook. */
  invocations: InvocationMetrics;
  /** Fed by the webhook deliverer's `onAttempt` hook. */
  webhooks: WebhookMetrics;
  /** Fed by the platform's scheduler: every run of a background task. */
  background: BackgroundTaskMetrics;
  /** Fed by the sweeper: runs returned to the queue when their lease ran out. */
  leases: LeaseMetrics;
  /** Fed by the reconciler of the custom resources (Kubernetes mode, private server). */
  cluster: ClusterWriteMetrics;
  /** The `/metrics` handler of one component, or of several that share a process (each part once). */
  handler(...components: MetricsComponent[]): MetricsHandler;
}

/**
 * Who serves what, so that nothing is counted twice when every process is
 * scraped: process figures everywhere, and the connection pool's wherever
 * there is a database; the database figures only on the private server;
 * per-run figures only on the executors, which observe them; webhook
 * attempts where the deliverer runs (public server, executors);
 * background tasks and the sweeper's recoveries where they run (servers, executors).
 */
/** The stores the figures read: workspace and model names for the executor's, the counts for the private server's. */
export type MetricsStores = GaugeStores & { workspaces: Pick<WorkspacesStore, 'nameById'>; models: Pick<ModelsStore, 'byId'> };

export function createPlatformMetrics(db: Db, stores: MetricsStores, logger: Logger, options: { token?: string; audit?: Pick<AuditTrail, 'dropped'>; shadows?: Pick<ShadowDispatch, 'dropped'> } = {}): PlatformMetrics {
  const invocations = new InvocationMetrics(db, stores, logger);
  const database = new DatabaseGauges(db, stores, logger);
  const webhooks = new WebhookMetrics();
  const background = new BackgroundTaskMetrics();
  const cluster = new ClusterWriteMetrics();
  const leases = new LeaseMetrics();
  const base: MetricsPart = { registry: processRegistry() };
  // The trail is the process's, like the process figures: each server of the process shows it.
  const audit: MetricsPart[] = options.audit ? [{ registry: auditRegistry(options.audit) }] : [];
  // Shadow invocations are copied where predictions are posted: the public server.
  const shadows: MetricsPart[] = options.shadows ? [{ registry: shadowRegistry(options.shadows) }] : [];
  // The process's connection pool, like the process figures: each server of the process shows it.
  const poolRegistry = databasePoolRegistry(db);
  const pool: MetricsPart[] = poolRegistry ? [{ registry: poolRegistry }] : [];
  const parts: Record<MetricsComponent, MetricsPart[]> = {
    auth: [base, ...pool, ...audit, background, leases],
    public: [base, ...pool, ...audit, ...shadows, webhooks, background, leases],
    private: [base, ...pool, ...audit, background, leases, cluster, { registry: database.registry, refresh: () => database.refresh() }],
    executor: [base, ...pool, invocations, webhooks, background, leases],
    operator: [base],
  };
  return {
    invocations,
    webhooks,
    background,
    leases,
    cluster,
    handler: (...components) => metricsHandler([...new Set(components.flatMap((component) => parts[component]))], { token: options.token, logger }),
  };
}
