import { html, type Html } from '../web/html.js';

/** One line: points as [UNIX seconds, value], in time order. */
export interface Series {
  label: string;
  points: Array<[number, number]>;
}

export interface ChartOptions {
  /** Unique within the page: ids of the title and description. */
  id: string;
  title: string;
  /** The time range shown, UNIX seconds, and the sampling step (gaps longer than two steps break the line). */
  start: number;
  end: number;
  step: number;
}

// Sized for a panel about 450 px wide, so the 13 px axis labels stay readable.
const WIDTH = 480;
const HEIGHT = 220;
const MARGIN = { left: 44, right: 14, top: 12, bottom: 26 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const Y_TICKS = 4;
const X_TICKS = 5;
/** Times with seconds are wider: fewer of them fit. */
const xTicks = (spanSeconds: number) => (spanSeconds <= SECONDS_SHOWN_UP_TO ? 3 : X_TICKS);
const SECONDS_SHOWN_UP_TO = 900;
/** Colours are CSS classes (series-0 … series-5), so the strict CSP needs no inline style. */
const PALETTE_SIZE = 6;

/**
 * A line chart as inline SVG, drawn on the server: no script and nothing
 * loaded. Its title and description (the latest value of every line) are
 * what a screen reader announces; the legend repeats them as text.
 */
export function lineChart(series: Series[], options: ChartOptions): Html {
  const drawn = series.filter((s) => s.points.length);
  if (!drawn.length) return html`<p class="empty">No data in this time range.</p>`;
  const [low, high] = valueRange(drawn);
  const x = (t: number) => MARGIN.left + ((t - options.start) / Math.max(options.end - options.start, 1)) * PLOT_W;
  const y = (v: number) => MARGIN.top + PLOT_H - ((v - low) / (high - low)) * PLOT_H;
  const spanSeconds = options.end - options.start;
  return html`<figure class="chart">
  <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${options.id}-title ${options.id}-desc" focusable="false">
    <title id="${options.id}-title">${options.title}</title>
    <desc id="${options.id}-desc">${describe(drawn)}</desc>
    ${ticks(low, high, Y_TICKS).map((v) => html`<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${round(y(v))}" y2="${round(y(v))}"></line><text class="axis" x="${MARGIN.left - 6}" y="${round(y(v)) + 4}" text-anchor="end">${formatValue(v)}</text>`)}
    ${ticks(options.start, options.end, xTicks(spanSeconds)).map((t, i) => html`<text class="axis" x="${round(x(t))}" y="${HEIGHT - 8}" text-anchor="${edgeAnchor(i, xTicks(spanSeconds))}">${formatTime(t, spanSeconds)}</text>`)}
    <line class="axis-line" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + PLOT_H}" y2="${MARGIN.top + PLOT_H}"></line>
    ${drawn.map((s, index) => line(s, index, options.step, x, y))}
  </svg>
  <figcaption><ul class="legend">${drawn.map((s, index) => html`<li><span class="swatch series-${index % PALETTE_SIZE}" aria-hidden="true"></span>${s.label}: ${formatValue(latest(s))}</li>`)}</ul></figcaption>
</figure>`;
}

function line(series: Series, index: number, step: number, x: (t: number) => number, y: (v: number) => number): Html {
  const runs = splitAtGaps(series.points, step * 2);
  const className = `series series-${index % PALETTE_SIZE}`;
  return html`${runs.map((run) =>
    run.length === 1
      ? html`<circle class="${className}" cx="${round(x(run[0]![0]))}" cy="${round(y(run[0]![1]))}" r="3"></circle>`
      : html`<polyline class="${className}" points="${run.map(([t, v]) => `${round(x(t))},${round(y(v))}`).join(' ')}"></polyline>`,
  )}`;
}

/** Consecutive points no further apart than `maxGap` seconds. */
export function splitAtGaps(points: Array<[number, number]>, maxGap: number): Array<Array<[number, number]>> {
  const runs: Array<Array<[number, number]>> = [];
  for (const point of points) {
    const run = runs.at(-1);
    if (run && point[0] - run.at(-1)![0] <= maxGap) run.push(point);
    else runs.push([point]);
  }
  return runs;
}

/** From zero (or the lowest negative value) to a round number above the highest value. */
export function valueRange(series: Series[]): [number, number] {
  const values = series.flatMap((s) => s.points.map(([, v]) => v));
  const low = Math.min(0, ...values);
  const high = niceCeil(Math.max(...values));
  return [low, high > low ? high : low + 1];
}

function niceCeil(value: number): number {
  if (value <= 0) return 0;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const nice = [1, 2, 2.5, 5, 10].find((m) => m * magnitude >= value)!;
  return nice * magnitude;
}

/** The outer time labels align inwards so they are not cut at the edges. */
const edgeAnchor = (index: number, intervals: number) => (index === 0 ? 'start' : index === intervals ? 'end' : 'middle');

function ticks(from: number, to: number, intervals: number): number[] {
  return Array.from({ length: intervals + 1 }, (_, i) => from + ((to - from) * i) / intervals);
}

export function formatValue(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3)}k`;
  return trim(value);
}

const trim = (value: number) => String(Number(value.toPrecision(3)));

/** UTC times: HH:MM:SS for a quarter of an hour or less (ticks under a minute apart), HH:MM for a day or less, MM-DD HH:MM beyond. */
export function formatTime(seconds: number, spanSeconds: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  if (spanSeconds <= SECONDS_SHOWN_UP_TO) return iso.slice(11, 19);
  return spanSeconds <= 86_400 ? iso.slice(11, 16) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

const latest = (series: Series) => series.points.at(-1)![1];

function describe(series: Series[]): string {
  return series.map((s) => `${s.label}: latest value ${formatValue(latest(s))}`).join('; ') + '.';
}

const round = (value: number) => Math.round(value * 10) / 10;
