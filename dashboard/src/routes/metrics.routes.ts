import type { Router } from 'express';
import type { Principal } from '../../../features/auth/principal.js';
import { AppError, InputError } from '../../../kernel/errors/errors.js';
import type { MetricDefinition } from '../../../features/metrics/catalog.js';
import type { QueryData } from '../../../features/metrics/prometheus.js';
import { principalOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { lineChart } from '../charts/line-chart.js';
import { seriesFromMatrix } from '../charts/series.js';
import { planMetrics, type ChartedMetric, type PickedModel } from '../charts/metric-plan.js';
import { ALL_MODELS, DEFAULT_RANGE, metricsBody, TIME_RANGES, type MetricPanel, type TimeRangeChoice } from '../pages/metrics.js';
import type { Choice } from '../pages/components.js';
import { parseModelKey } from '../pages/links.js';
import { modelChoices } from './listing.js';

/** About this many samples per line, whatever the range. */
const SAMPLES = 120;
const MIN_STEP_SECONDS = 5;

/** What the page needs of the metrics service the private server's `/api/metric` uses. */
export interface MetricsSource {
  list(principal: Principal): MetricDefinition[];
  query(principal: Principal, name: string, query: Record<string, unknown>): Promise<{ data: QueryData }>;
}

/** Charts of the catalog metrics of the workspace, or of one of its models, over a chosen time range. */
export function mountMetricRoutes(router: Router, dash: Dashboard, metrics: MetricsSource = dash.platform.services.metrics): void {
  router.get('/metrics', async (req, res) => {
    const principal = principalOf(res);
    const range = TIME_RANGES.find((r) => r.value === req.query.range) ?? DEFAULT_RANGE;
    const models = await modelChoices(dash, principal);
    const chosen = typeof req.query.model === 'string' ? req.query.model : ALL_MODELS;
    const model = pickedModel(chosen, models);
    const plan = planMetrics(metrics.list(principal), model);
    const panels = await Promise.all(plan.charted.map((charted) => panelOf(metrics, principal, charted, model, range, dash.platform.now())));
    const problems = new Set(panels.map((p) => p.problem));
    // When the backend is down or not configured, say it once rather than under every chart.
    const sharedProblem = panels.length > 1 && problems.size === 1 ? panels[0]!.problem : undefined;
    const shown = sharedProblem ? panels.map(({ name, description, note }) => ({ name, description, note })) : panels;
    const body = metricsBody({ range, models, model: model ? chosen : ALL_MODELS, panels: shown, undrawn: plan.undrawn, sharedProblem });
    await sendPage(dash, req, res, { title: 'Metrics', body, current: '/metrics' });
  });
}

/** The model of the picker's choice: one of the workspace's, or none for the whole workspace. */
function pickedModel(chosen: string, models: Choice[]): PickedModel | undefined {
  if (chosen === ALL_MODELS) return undefined;
  const model = models.some((m) => m.value === chosen) ? parseModelKey(chosen) : undefined;
  if (!model) throw new InputError('model: choose a model of the list.');
  return model;
}

async function panelOf(metrics: MetricsSource, principal: Principal, charted: ChartedMetric, model: PickedModel | undefined, range: TimeRangeChoice, nowMs: number): Promise<MetricPanel> {
  const { metric } = charted;
  // Rounded up, so the last point holds the samples of the second that has begun.
  const end = Math.ceil(nowMs / 1000);
  const start = end - range.seconds;
  const step = Math.max(MIN_STEP_SECONDS, Math.round(range.seconds / SAMPLES));
  const note = charted.wholeWorkspace ? 'The whole workspace: this metric is not measured per model.' : undefined;
  const scope = model && !charted.wholeWorkspace ? `${model.code} ${model.version}, ` : '';
  try {
    const { data } = await metrics.query(principal, metric.name, { ...charted.params, start: String(start), end: String(end), step: String(step) });
    const chart = lineChart(seriesFromMatrix(metric.name, data), { id: `chart-${metric.name}`, title: `${metric.name} (${scope}${range.label.toLowerCase()})`, start, end, step });
    return { name: metric.name, description: metric.description, note, chart };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { name: metric.name, description: metric.description, note, problem: error.message };
  }
}
