import type { Router } from 'express';
import type { Principal } from '../../../features/auth/principal.js';
import { AppError } from '../../../kernel/errors/errors.js';
import type { MetricDefinition } from '../../../features/metrics/catalog.js';
import type { QueryData } from '../../../features/metrics/prometheus.js';
import { principalOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { lineChart } from '../charts/line-chart.js';
import { seriesFromMatrix } from '../charts/series.js';
import { metricsBody, TIME_RANGES, type MetricPanel, type TimeRangeChoice } from '../pages/metrics.js';

/** About this many samples per line, whatever the range. */
const SAMPLES = 120;
const MIN_STEP_SECONDS = 15;

/** What the page needs of the metrics service the private server's `/api/metric` uses. */
export interface MetricsSource {
  list(principal: Principal): MetricDefinition[];
  query(principal: Principal, name: string, query: Record<string, unknown>): Promise<{ data: QueryData }>;
}

/** Charts of the catalog metrics of the workspace over a chosen time range. */
export function mountMetricRoutes(router: Router, dash: Dashboard, metrics: MetricsSource = dash.platform.services.metrics): void {
  router.get('/metrics', async (req, res) => {
    const principal = principalOf(res);
    const range = TIME_RANGES.find((r) => r.value === req.query.range) ?? TIME_RANGES[1]!;
    // Metrics that need parameters (one model's durations) have no whole-workspace chart.
    const charted = metrics.list(principal).filter((m) => m.required_params.length === 0);
    const panels = await Promise.all(charted.map((metric) => panelOf(metrics, principal, metric, range, dash.platform.now())));
    const problems = new Set(panels.map((p) => p.problem));
    // When the backend is down or not configured, say it once rather than under every chart.
    const sharedProblem = panels.length > 1 && problems.size === 1 ? panels[0]!.problem : undefined;
    const shown = sharedProblem ? panels.map(({ name, description }) => ({ name, description })) : panels;
    await sendPage(dash, req, res, { title: 'Metrics', body: metricsBody({ range, panels: shown, sharedProblem }), current: '/metrics' });
  });
}

async function panelOf(metrics: MetricsSource, principal: Principal, metric: MetricDefinition, range: TimeRangeChoice, nowMs: number): Promise<MetricPanel> {
  const end = Math.floor(nowMs / 1000);
  const start = end - range.seconds;
  const step = Math.max(MIN_STEP_SECONDS, Math.round(range.seconds / SAMPLES));
  try {
    const { data } = await metrics.query(principal, metric.name, { start: String(start), end: String(end), step: String(step) });
    const chart = lineChart(seriesFromMatrix(metric.name, data), { id: `chart-${metric.name}`, title: `${metric.name} (${range.label.toLowerCase()})`, start, end, step });
    return { name: metric.name, description: metric.description, chart };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { name: metric.name, description: metric.description, problem: error.message };
  }
}
