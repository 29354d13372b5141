import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { alertBox } from './components.js';

export interface TimeRangeChoice {
  value: string;
  label: string;
  seconds: number;
}

export const TIME_RANGES: TimeRangeChoice[] = [
  { value: '1h', label: 'Last hour', seconds: 3600 },
  { value: '6h', label: 'Last 6 hours', seconds: 6 * 3600 },
  { value: '24h', label: 'Last 24 hours', seconds: 86_400 },
  { value: '7d', label: 'Last 7 days', seconds: 7 * 86_400 },
];

export interface MetricPanel {
  name: string;
  description: string;
  /** The chart, or why there is none. */
  chart?: Html;
  problem?: string;
}

export function metricsBody(options: { range: TimeRangeChoice; panels: MetricPanel[]; sharedProblem?: string }): Html {
  return html`<form class="card row-form" method="get" action="${at('/metrics')}">
  <div class="field">
    <label for="field-range">Time range</label>
    <select id="field-range" name="range">
      ${TIME_RANGES.map((r) => html`<option value="${r.value}"${r.value === options.range.value ? html` selected` : ''}>${r.label}</option>`)}
    </select>
  </div>
  <button type="submit" class="button primary">Show</button>
</form>
${options.sharedProblem ? alertBox('warning', options.sharedProblem) : ''}
<div class="panels">
  ${options.panels.map(
    (panel) => html`<section class="card panel" aria-labelledby="metric-${panel.name}">
    <h2 id="metric-${panel.name}">${panel.name.replace(/_/g, ' ')}</h2>
    <p class="muted">${panel.description}</p>
    ${panel.chart ?? ''}${panel.problem ? html`<p class="problem">${panel.problem}</p>` : ''}
  </section>`,
  )}
</div>`;
}
