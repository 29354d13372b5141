import { metricNames as n } from './names.js';

/** A metric definition, as `GET /api/metric` answers it. */
export interface MetricDefinition {
  name: string;
  description: string;
  /** PromQL; every `__PARAMS__` becomes the label matchers (the workspace's always among them). */
  metrics_query: string;
  required_params: string[];
  optional_params: string[];
}

// Figures read from the database are exported by the private server; with
// several replicas each exports the same numbers, so the templates first take
// `max by` the series' own labels (one copy per series, whatever the number of
// replicas) and only then add up. Executor counters are per process and are
// summed as they are.
const once = (labels: string, selector: string) => `max by (${labels}) (${selector})`;
const sessions = (state: 'OPEN' | 'CLOSED') => `sum by (workspace) (${once('workspace, model_code, model_version, user_id', `${n.sessions}{state="${state}",__PARAMS__}`)})`;
// The database counts by model version: one copy of each, added up per workspace; 0 rather
// than no data for a workspace (or model) that is live with nothing waiting or running.
const workload = (name: string) => `sum by (workspace) (${once('workspace, model_code, model_version', `${name}{__PARAMS__}`)}) or 0 * ${once('workspace', `${n.models}{__PARAMS__}`)}`;
// Rates and quantiles look back this far: four scrapes at the 15 s to 1 min intervals clusters use.
const WINDOW = '5m';
// Executors' histograms add up across processes; each quantile is one line, named by a `quantile` label.
const quantile = (histogram: string, q: string) =>
  `label_replace(histogram_quantile(${q}, sum by (workspace, le) (rate(${histogram}_bucket{__PARAMS__}[${WINDOW}]))), "quantile", "${q}", "", "")`;
const QUANTILES = ['0.5', '0.95', '0.99'];
const quantiles = (histogram: string) => QUANTILES.map((q) => quantile(histogram, q)).join(' or ');
const invocations = (extra = '') => `sum by (workspace) (${n.invocations}{${extra}__PARAMS__})`;
const perSecond = (extra = '') => `sum by (workspace) (rate(${n.invocations}{${extra}__PARAMS__}[${WINDOW}]))`;
const MODEL = ['model_code', 'model_version'];

export const METRIC_CATALOG: readonly MetricDefinition[] = [
  {
    name: 'active_sessions',
    description: 'Number of OPEN sessions.',
    metrics_query: sessions('OPEN'),
    required_params: [],
    optional_params: ['model_code', 'model_version', 'user_id', 'workspace'],
  },
  {
    name: 'closed_sessions',
    description: 'Number of CLOSED sessions.',
    metrics_query: sessions('CLOSED'),
    required_params: [],
    optional_params: ['model_code', 'model_version', 'user_id', 'workspace'],
  },
  {
    name: 'total_invocations',
    description: 'Number of invocations the executors have finished (status COMPLETED or ERROR; type PREDICT or EXPLAIN), counted since each executor started.',
    metrics_query: invocations(),
    required_params: [],
    optional_params: ['model_code', 'model_version', 'status', 'type'],
  },
  {
    name: 'total_deployments',
    description: 'Number of live deployments.',
    metrics_query: `sum by (workspace) (${once('workspace, proxy_class, connector_class', `${n.deployments}{__PARAMS__}`)})`,
    required_params: [],
    optional_params: ['workspace', 'proxy_class', 'connector_class'],
  },
  {
    name: 'total_models',
    description: 'Number of live registered models (explainers included).',
    metrics_query: `sum by (workspace) (${once('workspace, model_code, model_version', `${n.models}{__PARAMS__}`)})`,
    required_params: [],
    optional_params: ['workspace', 'model_code', 'model_version'],
  },
  {
    name: 'invocation_failure_rate',
    description: 'Percentage (0 to 100) of finished invocations that ended in ERROR.',
    // `or 0 * …` turns "no failure yet" into 0 rather than no data.
    metrics_query: `100 * (${invocations('status="ERROR",')} or 0 * ${invocations()}) / ${invocations()}`,
    required_params: [],
    optional_params: ['model_code', 'model_version'],
  },
  {
    name: 'queued_invocations',
    description: 'Number of invocations waiting to run (QUEUED), retries waiting out their backoff included: the queue depth.',
    metrics_query: workload(n.modelQueuedInvocations),
    required_params: [],
    optional_params: MODEL,
  },
  {
    name: 'in_flight_invocations',
    description: 'Number of invocations an executor is running (IN_PROGRESS): the model calls in flight.',
    metrics_query: workload(n.modelInFlightInvocations),
    required_params: [],
    optional_params: MODEL,
  },
  {
    name: 'queue_wait_seconds',
    description: 'Seconds invocations waited from queueing to their first claim by an executor, over the last 5 minutes: the median (quantile 0.5), the 95th and the 99th percentile (0.95, 0.99).',
    metrics_query: quantiles(n.queueWait),
    required_params: [],
    optional_params: MODEL,
  },
  {
    name: 'invocation_duration_seconds',
    description: 'Seconds from an executor\'s claim of an invocation to the commit of its result (the model call included), over the last 5 minutes: the median (quantile 0.5), the 95th and the 99th percentile (0.95, 0.99).',
    metrics_query: quantiles(n.invocationDuration),
    required_params: [],
    optional_params: [...MODEL, 'type', 'success'],
  },
  {
    name: 'invocations_per_second',
    description: 'Invocations the executors finished per second (status COMPLETED or ERROR), averaged over the last 5 minutes: the throughput.',
    metrics_query: perSecond(),
    required_params: [],
    optional_params: [...MODEL, 'status', 'type'],
  },
  {
    name: 'failed_invocations_per_second',
    description: 'Invocations that ended in ERROR per second, averaged over the last 5 minutes.',
    // `or 0 * …` turns "no failure yet" into 0 rather than no data.
    metrics_query: `${perSecond('status="ERROR",')} or 0 * ${perSecond()}`,
    required_params: [],
    optional_params: [...MODEL, 'type'],
  },
  {
    name: 'last_model_invocation_duration_seconds',
    description: 'Duration in seconds of the latest run of a model, by success (true or false); with several executors, the longest of their latest runs.',
    metrics_query: `max by (workspace, model_code, model_version, success) (${n.lastInvocationDuration}{__PARAMS__})`,
    required_params: ['model_code', 'model_version'],
    optional_params: ['success'],
  },
];

export const metricByName = (name: string): MetricDefinition | undefined => METRIC_CATALOG.find((m) => m.name === name);

/** Every label a caller may filter on, over the whole catalog. */
export const FILTER_LABELS: readonly string[] = [...new Set(METRIC_CATALOG.flatMap((m) => [...m.required_params, ...m.optional_params]))];
