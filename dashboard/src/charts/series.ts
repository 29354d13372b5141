import type { QueryData } from '../../../features/metrics/prometheus.js';
import type { Series } from './line-chart.js';

interface MatrixSeries {
  metric?: Record<string, string>;
  values?: Array<[number, string]>;
}

/**
 * Lines of a Prometheus range answer (`resultType: matrix`). A line is named
 * by its labels, less the workspace every series of the page shares; values
 * Prometheus writes as text, NaN and infinities included, are dropped when
 * not finite.
 */
export function seriesFromMatrix(metricName: string, data: QueryData): Series[] {
  if (data.resultType !== 'matrix') return [];
  return (data.result as MatrixSeries[]).map((entry) => ({
    label: labelOf(metricName, entry.metric ?? {}),
    points: (entry.values ?? []).map(([t, v]): [number, number] => [Number(t), Number(v)]).filter(([t, v]) => Number.isFinite(t) && Number.isFinite(v)),
  }));
}

function labelOf(metricName: string, labels: Record<string, string>): string {
  const shown = Object.entries(labels).filter(([name]) => name !== 'workspace' && name !== '__name__');
  return shown.length ? shown.map(([name, value]) => (name === 'quantile' ? percentile(value) : `${name}=${value}`)).join(', ') : metricName;
}

/** `quantile="0.99"` as people read it on a chart: p99. */
function percentile(quantile: string): string {
  const percent = Number(quantile) * 100;
  return Number.isFinite(percent) ? `p${Number(percent.toFixed(1))}` : `quantile=${quantile}`;
}
