// The names of everything didyma exports, shared by the instruments and
// the PromQL templates of the catalog so the two cannot drift apart.

export const METRIC_PREFIX = 'didyma_';

export const metricNames = {
  /** Counter, from the executors: finished runs by workspace, model_code, model_version, user_id, status, type. */
  invocations: `${METRIC_PREFIX}invocations_total`,
  /** Histogram, from the executors: run time by workspace, model_code, model_version, type, success. */
  invocationDuration: `${METRIC_PREFIX}invocation_duration_seconds`,
  /** Gauge, from the executors: the latest run time by workspace, model_code, model_version, success. */
  lastInvocationDuration: `${METRIC_PREFIX}last_invocation_duration_seconds`,
  /** Gauge, from the database: sessions by workspace, model_code, model_version, user_id, state. */
  sessions: `${METRIC_PREFIX}sessions`,
  /** Gauge, from the database: live deployments by workspace, proxy_class, connector_class. */
  deployments: `${METRIC_PREFIX}deployments`,
  /** Gauge, from the database: 1 per live model by workspace, model_code, model_version. */
  models: `${METRIC_PREFIX}models`,
  /** Gauge, from the database: QUEUED invocations by workspace (what the executors' autoscaler reads). */
  queuedInvocations: `${METRIC_PREFIX}invocations_queued`,
  /** Gauge, from the database: QUEUED invocations by workspace, model_code, model_version. */
  modelQueuedInvocations: `${METRIC_PREFIX}model_invocations_queued`,
  /** Gauge, from the database: IN_PROGRESS invocations (model calls in flight) by workspace. */
  inFlightInvocations: `${METRIC_PREFIX}invocations_in_flight`,
  /** Gauge, from the database: IN_PROGRESS invocations by workspace, model_code, model_version. */
  modelInFlightInvocations: `${METRIC_PREFIX}model_invocations_in_flight`,
  /** Histogram, from the executors: seconds from queueing to the first claim, by workspace, model_code, model_version. */
  queueWait: `${METRIC_PREFIX}invocation_queue_wait_seconds`,
  /** Counter, where deliverers run: webhook attempts by outcome (delivered, retry, failed). */
  webhookAttempts: `${METRIC_PREFIX}webhook_attempts_total`,
  /** Histogram, where deliverers run: seconds from queueing a webhook delivery to its receiver's 2xx. */
  webhookDelivery: `${METRIC_PREFIX}webhook_delivery_seconds`,
  /** Counter, where background tasks run: runs by task, failed ones included. */
  backgroundTaskRuns: `${METRIC_PREFIX}background_task_runs_total`,
  /** Counter, where background tasks run: failed runs by task. */
  backgroundTaskFailures: `${METRIC_PREFIX}background_task_failures_total`,
  /** Histogram, where background tasks run: seconds per run by task. */
  backgroundTaskDuration: `${METRIC_PREFIX}background_task_duration_seconds`,
  /** Counter, where sweepers run: runs returned to the queue because their executor stopped renewing the lease. */
  invocationLeasesExpired: `${METRIC_PREFIX}invocation_leases_expired_total`,
  /** Counter, from the private server in Kubernetes mode: cluster writes refused, by kind and operation. */
  clusterWriteFailures: `${METRIC_PREFIX}cluster_write_failures_total`,
  /** Gauge, from the private server in Kubernetes mode: rows by kind and state of their resource (applied, failed, removing). */
  clusterResources: `${METRIC_PREFIX}cluster_resources`,
  /** Gauge, from every process on PostgreSQL: connections of its knex pool by state (used, free). */
  dbPoolConnections: `${METRIC_PREFIX}db_pool_connections`,
  /** Gauge, from every process on PostgreSQL: the most connections its pool opens (DATABASE_POOL_MAX). */
  dbPoolMax: `${METRIC_PREFIX}db_pool_max`,
  /** Gauge, from every process on PostgreSQL: queries waiting for a connection of its pool. */
  dbPoolPendingAcquires: `${METRIC_PREFIX}db_pool_pending_acquires`,
  /** Gauge, from every process on PostgreSQL: connections its pool is opening. */
  dbPoolPendingCreates: `${METRIC_PREFIX}db_pool_pending_creates`,
  /** Histogram, from every process on PostgreSQL: seconds a query waited for a connection of the pool, timeouts included. */
  dbPoolAcquireWait: `${METRIC_PREFIX}db_pool_acquire_wait_seconds`,
  /** Gauge: 1 when the last scrape read the database figures, 0 when it failed. */
  databaseUp: `${METRIC_PREFIX}database_metrics_up`,
} as const;
