import { html, type Html } from '../web/html.js';

/** One named value: a class's probability, a feature's contribution… */
export interface Bar {
  name: string;
  value: number;
}

export interface BarChartOptions {
  title: string;
  /** How a value is printed beside its bar. */
  format: (value: number) => string;
}

/** Bars drawn at most; the rest, smaller in magnitude, are counted under the chart. */
export const MAX_BARS = 20;
/** Longer names are cut in the drawing (the full name is the bar's tooltip and in the chart's label). */
const MAX_NAME_CHARS = 20;

// Sized like the line charts: 13 px text stays readable in a panel about 450 px wide.
const WIDTH = 480;
const NAME_WIDTH = 164;
const VALUE_WIDTH = 64;
const GAP = 6;
const PLOT_LEFT = NAME_WIDTH + GAP;
const PLOT_WIDTH = WIDTH - VALUE_WIDTH - GAP - PLOT_LEFT;
const ROW = 22;
const BAR = 14;
const PAD = 4;

/**
 * A horizontal bar chart as inline SVG, drawn on the server: the name left
 * of each bar, its value printed right, negative values to the left of a
 * zero axis. A screen reader announces the label, which lists every value.
 */
export function barChart(bars: Bar[], options: BarChartOptions): Html {
  const { shown, hidden } = largest(bars, MAX_BARS);
  if (!shown.length) return html``;
  const [low, high] = domainOf(shown);
  const x = (value: number) => PLOT_LEFT + ((value - low) / (high - low)) * PLOT_WIDTH;
  const zero = round(x(0));
  const height = PAD * 2 + shown.length * ROW;
  return html`<figure class="bar-chart">
  <svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${describe(options, shown, hidden)}" focusable="false">
    <title>${options.title}</title>
    ${shown.map((bar, index) => barRow(bar, index, x, zero, options.format))}
    <line class="zero-axis" x1="${zero}" x2="${zero}" y1="${PAD / 2}" y2="${height - PAD / 2}"></line>
  </svg>
  ${hidden ? html`<figcaption class="muted more">and ${String(hidden)} more, smaller in magnitude</figcaption>` : ''}
</figure>`;
}

function barRow(bar: Bar, index: number, x: (value: number) => number, zero: number, format: (value: number) => string): Html {
  const top = PAD + index * ROW;
  const end = round(x(bar.value));
  const text = top + ROW / 2 + 4.5;
  return html`<g><title>${bar.name}: ${format(bar.value)}</title>
      <text class="bar-name" x="${NAME_WIDTH}" y="${text}" text-anchor="end">${shortName(bar.name)}</text>
      <rect class="bar${bar.value < 0 ? ' negative' : ''}" x="${Math.min(end, zero)}" y="${top + (ROW - BAR) / 2}" width="${round(Math.abs(end - zero))}" height="${BAR}"></rect>
      <text class="bar-value" x="${WIDTH - 2}" y="${text}" text-anchor="end">${format(bar.value)}</text></g>`;
}

/** The `limit` values largest in magnitude, largest first (ties keep their order), and how many were left out. */
export function largest(bars: Bar[], limit: number): { shown: Bar[]; hidden: number } {
  const finite = bars.filter((bar) => Number.isFinite(bar.value));
  const sorted = finite.map((bar, index) => ({ bar, index })).sort((a, b) => Math.abs(b.bar.value) - Math.abs(a.bar.value) || a.index - b.index);
  return { shown: sorted.slice(0, limit).map(({ bar }) => bar), hidden: Math.max(finite.length - limit, 0) };
}

/** From the lowest value (or zero) to the highest (or zero): zero is always on the axis. */
export function domainOf(bars: Bar[]): [number, number] {
  const low = Math.min(0, ...bars.map((bar) => bar.value));
  const high = Math.max(0, ...bars.map((bar) => bar.value));
  return high > low ? [low, high] : [0, 1];
}

const shortName = (name: string) => (name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS - 1)}…` : name);

function describe(options: BarChartOptions, shown: Bar[], hidden: number): string {
  const values = shown.map((bar) => `${bar.name} ${options.format(bar.value)}`).join(', ');
  return `${options.title}: ${values}${hidden ? `, and ${hidden} more` : ''}.`;
}

const round = (value: number) => Math.round(value * 10) / 10;
