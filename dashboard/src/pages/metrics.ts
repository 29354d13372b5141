import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { alertBox, selectField, type Choice } from './components.js';
import type { UndrawnMetric } from '../charts/metric-plan.js';

export interface TimeRangeChoice {
  value: string;
  label: string;
  seconds: number;
}

export const TIME_RANGES: TimeRangeChoice[] = [
  { value: '5m', label: 'Last 5 minutes', seconds: 300 },
  { value: '15m', label: 'Last 15 minutes', seconds: 900 },
  { value: '1h', label: 'Last hour', seconds: 3600 },
  { value: '6h', label: 'Last 6 hours', seconds: 6 * 3600 },
  { value: '24h', label: 'Last 24 hours', seconds: 86_400 },
  { value: '7d', label: 'Last 7 days', seconds: 7 * 86_400 },
];

/** The range a page opens on: recent enough that the first predictions show. */
export const DEFAULT_RANGE = TIME_RANGES[2]!;

/** The picker's choice of every model together. */
export const ALL_MODELS = '';

export interface MetricPanel {
  name: string;
  description: string;
  /** The chart, or why there is none. */
  chart?: Html;
  problem?: string;
  /** Said under the description, e.g. that the chart is the whole workspace's. */
  note?: string;
}

export interface MetricsPage {
  range: TimeRangeChoice;
  /** The workspace's models, as `code:version` choices; `model` is the one chosen, or ALL_MODELS. */
  models: Choice[];
  model: string;
  panels: MetricPanel[];
  undrawn: UndrawnMetric[];
  sharedProblem?: string;
}

export function metricsBody(page: MetricsPage): Html {
  return html`<form class="card row-form" method="get" action="${at('/metrics')}">
  ${selectField({ name: 'model', label: 'Model', choices: [{ value: ALL_MODELS, label: 'All models (the whole workspace)' }, ...page.models], value: page.model })}
  ${selectField({ name: 'range', label: 'Time range', choices: TIME_RANGES, value: page.range.value })}
  <button type="submit" class="button primary">Show</button>
</form>
${page.sharedProblem ? alertBox('warning', page.sharedProblem) : ''}
<div class="panels">
  ${page.panels.map(
    (panel) => html`<section class="card panel" aria-labelledby="metric-${panel.name}">
    <h2 id="metric-${panel.name}">${panel.name.replace(/_/g, ' ')}</h2>
    <p class="muted">${panel.description}</p>
    ${panel.note ? html`<p class="muted">${panel.note}</p>` : ''}
    ${panel.chart ?? ''}${panel.problem ? html`<p class="problem">${panel.problem}</p>` : ''}
  </section>`,
  )}
</div>
${undrawnList(page.undrawn)}`;
}

/** Every metric of the catalog without a chart here, with the reason: none is left out without a word. */
function undrawnList(undrawn: UndrawnMetric[]): Html | string {
  if (!undrawn.length) return '';
  return html`<section class="card" id="not-charted" aria-labelledby="not-charted-title">
  <h2 id="not-charted-title">Not charted here</h2>
  <ul>
    ${undrawn.map((m) => html`<li id="undrawn-${m.name}"><strong>${m.name.replace(/_/g, ' ')}</strong> (<code>${m.name}</code>): ${m.reason} <span class="muted">${m.description}</span></li>`)}
  </ul>
</section>`;
}
