import type { MetricDefinition } from '../../../features/metrics/catalog.js';

/** A model version the page draws, as its picker names it. */
export interface PickedModel {
  code: string;
  version: string;
}

/** A metric the page charts, with the parameters of its query. */
export interface ChartedMetric {
  metric: MetricDefinition;
  params: Record<string, string>;
  /** A model is picked but the metric cannot be narrowed to it: the chart is the whole workspace's. */
  wholeWorkspace: boolean;
}

/** A metric of the catalog the page does not chart, and why. */
export interface UndrawnMetric {
  name: string;
  description: string;
  reason: string;
}

export interface MetricPlan {
  charted: ChartedMetric[];
  undrawn: UndrawnMetric[];
}

const MODEL_PARAMS = ['model_code', 'model_version'];

/** Running totals the catalog also gives as a rate: the page charts the rate. */
export const RATE_OF: Readonly<Record<string, string>> = { total_invocations: 'invocations_per_second' };

/**
 * What the Metrics page does with each metric of the catalog: every metric is
 * either charted or listed with the reason it is not, never left out. The
 * picked model narrows every metric that takes model_code and model_version,
 * and is what draws the metrics that need them.
 */
export function planMetrics(catalog: readonly MetricDefinition[], model: PickedModel | undefined): MetricPlan {
  const names = new Set(catalog.map((m) => m.name));
  const plan: MetricPlan = { charted: [], undrawn: [] };
  for (const metric of catalog) {
    const reason = reasonNotDrawn(metric, model, names);
    if (reason) plan.undrawn.push({ name: metric.name, description: metric.description, reason });
    else plan.charted.push(chartOf(metric, model));
  }
  return plan;
}

function reasonNotDrawn(metric: MetricDefinition, model: PickedModel | undefined, names: Set<string>): string | undefined {
  const rate = RATE_OF[metric.name];
  if (rate && names.has(rate)) return `A running total since each executor started, which says little over time: its rate is charted as ${rate.replace(/_/g, ' ')}.`;
  const unknown = metric.required_params.filter((p) => !MODEL_PARAMS.includes(p));
  if (unknown.length) return `It needs ${unknown.join(', ')}, which this page cannot choose: query GET /api/metric/${metric.name} with them.`;
  if (metric.required_params.length && !model) return 'Measured per model version: choose a model above to chart it.';
  return undefined;
}

function chartOf(metric: MetricDefinition, model: PickedModel | undefined): ChartedMetric {
  const accepted = [...metric.required_params, ...metric.optional_params];
  const narrowable = MODEL_PARAMS.every((p) => accepted.includes(p));
  const params: Record<string, string> = model && narrowable ? { model_code: model.code, model_version: model.version } : {};
  return { metric, params, wholeWorkspace: Boolean(model) && !narrowable };
}
