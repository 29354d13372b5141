import { html, type Html } from '../web/html.js';
import { at } from '../context.js';
import { code, dataTable, selectField, textField, timeText, type Choice } from './components.js';
import { aliasesPath } from './model-aliases.js';

// The versions behind an alias compared on outcomes and feedback, one row per metric.

interface Percentiles {
  count: number;
  p50: number | null;
  p99: number | null;
}

interface FeedbackMetric {
  name: string;
  kind: 'boolean' | 'number' | 'enum';
  count: number;
  rate?: number | null;
  mean?: number | null;
  interval?: { low: number; high: number } | null;
  values?: Array<{ value: unknown; count: number }>;
}

export interface VersionOutcomes {
  version: string;
  invocations: number;
  outcomes: Record<'completed' | 'error' | 'cancelled' | 'pending', number>;
  errors: number;
  queue_wait_ms: Percentiles;
  run_time_ms: Percentiles;
  feedback: { count: number; properties: FeedbackMetric[] };
  /** A shadow version's outputs against its primaries'; null for the others. */
  agreement?: { compared: number; agreed: number; rate: number | null; interval: { low: number; high: number } | null; truncated: boolean } | null;
}

export interface AliasComparisonPage {
  codes: Choice[];
  query: { model: string; alias: string; since: string; until: string; tolerance: string };
  comparison?: { since: string; until: string; versions: VersionOutcomes[] };
}

export function aliasComparisonBody(page: AliasComparisonPage): Html {
  if (!page.codes.length) return html`<p class="empty">No models are registered in this workspace yet.</p>`;
  return html`<form class="card row-form" method="get" action="${at('/aliases')}">
  ${selectField({ name: 'model', label: 'Model code', choices: page.codes, value: page.query.model })}
  ${textField({ name: 'alias', label: 'Alias', value: page.query.alias, required: true, pattern: '[a-z][a-z0-9\\-]{0,39}', hint: 'production, staging, …' })}
  ${textField({ name: 'since', label: 'Since', value: page.query.since, hint: 'RFC 3339; 7 days before until by default' })}
  ${textField({ name: 'until', label: 'Until', value: page.query.until, hint: 'RFC 3339; now by default' })}
  ${textField({ name: 'tolerance', label: 'Tolerance', value: page.query.tolerance, hint: 'shadows: how far numbers may differ and still agree; 1e-6 by default' })}
  <button type="submit" class="button primary">Compare</button>
</form>
${page.query.model ? html`<p><a href="${aliasesPath(page.query.model)}">The aliases of ${page.query.model}</a>: where each points, its traffic policy and history.</p>` : ''}
${page.comparison ? comparisonTable(page.query, page.comparison) : ''}`;
}

function comparisonTable(query: AliasComparisonPage['query'], comparison: NonNullable<AliasComparisonPage['comparison']>): Html {
  const versions = comparison.versions;
  const rows = metricRows(versions);
  return html`<p class="muted">Sessions opened through ${code(query.alias)} of ${code(query.model)}, by the version each one ran, from ${timeText(comparison.since)} to ${timeText(comparison.until)}. Intervals are 95%: Wilson for a rate, Student’s t for a mean.</p>
${dataTable({
  caption: `Comparison of ${query.alias}`,
  headers: ['Metric', ...versions.map((v) => `Version ${v.version}`)],
  rows: rows.map(([metric, cells]) => [metric, ...cells]),
  empty: 'No session opened through this alias ran anything in this window.',
})}`;
}

/** Each metric with one cell per version, in the order the metrics first appear. */
export function metricRows(versions: VersionOutcomes[]): Array<[string, string[]]> {
  const perVersion = versions.map(cellsOf);
  const metrics = [...new Set(perVersion.flatMap((cells) => [...cells.keys()]))];
  return metrics.map((metric) => [metric, perVersion.map((cells) => cells.get(metric) ?? '–')]);
}

function cellsOf(v: VersionOutcomes): Map<string, string> {
  const cells = new Map<string, string>([
    ['invocations', String(v.invocations)],
    ['errors', `${v.errors}${v.invocations ? ` (${percent(v.errors / v.invocations)})` : ''}`],
    ['completed', String(v.outcomes.completed)],
    ['cancelled', String(v.outcomes.cancelled)],
    ['pending', String(v.outcomes.pending)],
    ['queue wait p50 / p99', percentiles(v.queue_wait_ms)],
    ['run time p50 / p99', percentiles(v.run_time_ms)],
    ['feedback', String(v.feedback.count)],
  ]);
  if (v.agreement) cells.set('agreement with the primary', agreementText(v.agreement));
  for (const metric of v.feedback.properties) {
    if (metric.kind === 'enum') {
      for (const item of metric.values ?? []) cells.set(`${metric.name} = ${JSON.stringify(item.value)}`, `${item.count} of ${metric.count}`);
      continue;
    }
    const value = metric.kind === 'boolean' ? metric.rate : metric.mean;
    const shown = value === null || value === undefined ? '–' : metric.kind === 'boolean' ? percent(value) : round(value);
    const interval = metric.interval ? ` [${metric.kind === 'boolean' ? percent(metric.interval.low) : round(metric.interval.low)} – ${metric.kind === 'boolean' ? percent(metric.interval.high) : round(metric.interval.high)}]` : '';
    cells.set(`${metric.name} (${metric.kind === 'boolean' ? 'rate' : 'mean'})`, `${shown}${interval}, n = ${metric.count}`);
  }
  return cells;
}

function agreementText(a: NonNullable<VersionOutcomes['agreement']>): string {
  if (!a.compared) return 'no pair compared yet';
  const interval = a.interval ? ` [${percent(a.interval.low)} – ${percent(a.interval.high)}]` : '';
  return `${a.agreed} of ${a.compared} (${percent(a.rate!)})${interval}${a.truncated ? ', the oldest pairs only' : ''}`;
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
const round = (value: number) => String(Number(value.toPrecision(4)));
const percentiles = (p: Percentiles) => (p.count ? `${round(p.p50!)} / ${round(p.p99!)} ms` : '–');
