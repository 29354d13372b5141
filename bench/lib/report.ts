// The table of one benchmark run: figures, targets as ratios of the same run, verdicts.
import { median, type Brief } from './load.js';
import type { SustainedCapacity } from './capacity.js';
import type { Throughput } from './invocations.js';
import type { Placement } from './placement.js';
import type { DrainSegment } from './paired-drain.js';
import type { LatencyPair, Percentiles } from './paired-latency.js';
import { DRAIN_SHARE, floodVerdicts, POST_SHARE, QUIET_SLACK_MS, quietBoundMs, type Drain, type DrainCpu, type FairnessReport, type Waits } from './fairness.js';
import type { NotificationsReport } from './notifications.js';
import { RSS_BOUND } from './targets.js';
import type { PostCpu, TracedSide, TracingCostReport, TracingSide } from './tracing-cost.js';
import type { TargetResult } from './verdict.js';


/** The CPU gauge (bench/lib/gauge.ts, ms: lower is faster) at the start, before each figure, and at the end. */
export interface GaugesMs {
  start: number;
  post?: number;
  get?: number;
  executor?: number;
  endToEnd?: number;
  end?: number;
}

export interface BenchReport {
  date: string;
  machine: {
    cpus: number;
    model: string;
    node: string;
    loadavgBefore: number[];
    loadavgAfter: number[];
    /** Share of the machine's CPU time the hypervisor took during (2), (3), (4)'s latency run and (5) (bench/lib/steal.ts); absent in older runs. */
    steal?: { post: number; get: number; endToEnd: number; executor: number };
    /** Absent in runs from before it was taken. */
    gaugeMs?: GaugesMs;
  };
  settings: {
    durationSec: number;
    connections: number;
    /** BENCH_MODEL_SERVER: mlserver or demo. */
    modelServer: string;
    /** What it is, e.g. "MLServer 1.7.1, scikit-learn iris". */
    modelServerLabel: string;
    /** The demo model server's inference time (BENCH_MODEL_DELAY_MS); null for MLServer. */
    modelDelayMs: number | null;
    sessions: number;
    executorConcurrency: number;
    logLevel: string;
    /** How the platform reached PostgreSQL: its Unix socket or loopback TCP (BENCH_DATABASE). */
    databaseTransport?: 'socket' | 'tcp';
    /** Where the model server and the executor ran (BENCH_PLACEMENT); absent in runs from before it. */
    placement?: Placement;
    /** Node options of the API servers (the chart's serverNodeOptions, or BENCH_NODE_OPTIONS). */
    serverNodeOptions: string;
  };
  floors: { postgres: { rps: number; p50: number; p99: number }; broker: { confirm: { p50: number; p99: number }; delivery: { p50: number; p99: number } } };
  /** (1) measured just before (2): the denominator of (2)'s ratio. */
  baselineForPost: Brief;
  postSaturated: Brief;
  postHalf: Brief;
  /** (1) measured just before (3): the denominator of (3)'s ratio. */
  baselineForGet: Brief;
  getSaturated: Brief;
  /** An upper bound of what the whole path sustains: POST at saturation with the executor running, completed ÷ first created_at → last completed_at. */
  endToEndSaturation: Throughput & { load: Brief };
  /** The highest even POST rate the whole path kept up with, found below endToEndSaturation.rps. */
  endToEndSustained: SustainedCapacity;
  /**
   * At 50% of endToEndSustained.rate, in rounds between direct runs (bench/lib/paired-latency.ts): count, p50, p99
   * and legs over every round, the POST load of each round, each round against the direct runs around it, and
   * the medians of the rounds' differences (`over`), which the targets are set against.
   */
  endToEnd: { rate: number; count: number; p50: number; p99: number; legs: Record<string, Percentiles>; loads: Brief[]; pairs: LatencyPair[]; over: Percentiles };
  /** Direct calls to the model server at the rate of endToEnd, with the same input: before the first round and after each. */
  directRuns: Brief[];
  /** (4) a prediction in one call (`Prefer: wait`), paired with direct calls like endToEnd; absent in runs from before it. */
  oneCall?: OneCallLatency;
  /**
   * The drain of the backlog: rps is the median of its segments' rates and ratio the median of their ratios to
   * the model server's maximum around them (bench/lib/paired-drain.ts); completed and failed count the whole backlog.
   */
  executor: Omit<Throughput, 'seconds'> & {
    backlog: number;
    ratio: number;
    /** The executor ran this long before the first segment. */
    warmUpSec: number;
    segments: DrainSegment[];
    /** Over the segments: the executor's CPU per invocation, and the model server's per call. */
    cpuUsPerInvocation: number;
    modelCpuUsPerCall: number;
  };
  /** The median of the maxima measured between the drain's segments (modelMaxRuns, req/s, in order). */
  modelMax: Brief;
  modelMaxRuns: number[];
  rssBytes: Record<string, number>;
  publicMemoryAfterPost?: Record<string, number>;
  /** (7) workspaces flooding while a quiet one sends (bench/lib/fairness.ts); absent in runs from before it. */
  fairness?: FairnessReport;
  /** (8) completion → each notification probe (bench/lib/notifications.ts); absent in runs from before it. */
  notifications?: NotificationsReport;
  /** (9) POST on a traced public server against an untraced one (bench/lib/tracing-cost.ts); absent in runs from before it. */
  tracing?: TracingCostReport;
}

const API_PROCESSES = ['auth', 'private', 'public', 'executor'];
const MiB = 1024 * 1024;
const n0 = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
const n1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
const n2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
const signed = (v: number) => (v < 0 ? n1(v) : `+${n1(v)}`);
const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : 'n/a');
const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');

/** Above this share of stolen CPU a figure measured the host more than the platform. */
export const DISTURBED_STEAL = 0.05;

/** A verdict, marked disturbed when the hypervisor took more than DISTURBED_STEAL of the CPU during its figure. */
export function judged(ok: boolean, steal: number | undefined): string {
  const stolen = steal !== undefined && Number.isFinite(steal) && steal > DISTURBED_STEAL;
  return stolen ? `${verdict(ok)} (disturbed: steal ${(steal * 100).toFixed(0)}%)` : verdict(ok);
}
const lat = (b: { p50: number; p99: number }) => `${n1(b.p50)} / ${n1(b.p99)}`;
/** The serving process's CPU per request, and how many times the baseline's that is. */
const cpu = (b: Brief, baseline?: Brief) =>
  b.cpuUsPerRequest === undefined ? '' : `${n0(b.cpuUsPerRequest)}${baseline?.cpuUsPerRequest ? ` (${n1(b.cpuUsPerRequest / baseline.cpuUsPerRequest)} ×)` : ''}`;

/** Anything but 2xx in a load run, e.g. " (503: 12)"; empty when every answer was a success. */
function failures(b: Pick<Brief, 'statuses' | 'errors' | 'timeouts'>): string {
  const bad = Object.entries(b.statuses).filter(([code]) => !code.startsWith('2'));
  const parts = bad.map(([code, count]) => `${code}: ${count}`);
  if (b.errors) parts.push(`errors: ${b.errors}`);
  if (b.timeouts) parts.push(`timeouts: ${b.timeouts}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** A table cell's excerpt of an error text: one line, at most 120 characters, no pipe. */
const excerpt = (text: string) => text.replace(/\s+/g, ' ').replace(/\|/g, '/').slice(0, 120);
const errored = (t: Pick<Throughput, 'failed' | 'errors'>) => (t.failed ? ` (ERROR: ${n0(t.failed)}${t.errors?.[0] ? `, most often “${excerpt(t.errors[0].error)}”` : ''})` : '');

/** How the executor's figure was taken: its segments after the warm-up, each with its ratio. */
export function segmentsText(e: BenchReport['executor']): string {
  if (!e.segments.length) return `: no segment, the backlog was too small for one after its first ${e.warmUpSec} s`;
  const seconds = n0(e.segments.reduce((sum, s) => sum + (Date.parse(s.to) - Date.parse(s.from)), 0) / 1000 / e.segments.length);
  const each = e.segments.map((s) => `${n0(s.rps)} (${pct(s.ratio)})`).join(', ');
  return `: median of ${e.segments.length} segments of ${seconds} s after its first ${e.warmUpSec} s, each against the mean of the maxima just before and after it; in order ${each}`;
}

/** The drain's CPU: the executor's per invocation, and the model server's per call against its figure at its maximum. */
export function drainCpu(e: BenchReport['executor'], modelMax: Brief): string {
  if (!Number.isFinite(e.cpuUsPerInvocation) || !Number.isFinite(e.modelCpuUsPerCall)) return '';
  const atMax = modelMax.cpuUsPerRequest === undefined ? '' : ` (${n0(modelMax.cpuUsPerRequest)} at its maximum)`;
  return `executor ${n0(e.cpuUsPerInvocation)}; model server ${n0(e.modelCpuUsPerCall)} per call${atMax}`;
}

/** A Markdown table, the same in the terminal, the JSON file and docs/benchmarks.md. */
export function renderTable(r: BenchReport): string {
  const rows: string[][] = [];
  // Cells: #, measure, value, latency, target, result; the server CPU per request goes after the latency where it was measured.
  const push = (cells: string[], serverCpu = '') => rows.push([...cells.slice(0, 4), serverCpu, ...cells.slice(4)]);
  const postRatio = r.postSaturated.rps / r.baselineForPost.rps;
  const getRatio = r.getSaturated.rps / r.baselineForGet.rps;
  const executorRatio = r.executor.ratio;
  const steal = r.machine.steal;
  const f = r.floors;
  const e2e = r.endToEndSaturation;
  const model = r.settings.modelServerLabel;
  push(['0', `floor: PostgreSQL \`select 1\` round trips (${r.settings.connections} clients, pool of 10)`, n0(f.postgres.rps), lat(f.postgres), '', '']);
  push(['0', 'floor: RabbitMQ quorum queue, persistent message publish → confirm', '', lat(f.broker.confirm), '', '']);
  push(['0', 'floor: RabbitMQ quorum queue, publish → delivery to a consumer', '', lat(f.broker.delivery), '', '']);
  push(['1', 'express "hello" (baseline), measured just before (2)', n0(r.baselineForPost.rps) + failures(r.baselineForPost), lat(r.baselineForPost), '', ''], cpu(r.baselineForPost));
  push(['2', 'POST …/invocation, saturation', n0(r.postSaturated.rps) + failures(r.postSaturated), lat(r.postSaturated), `of (1): ${pct(postRatio)} (information; target 1 below)`, ''], cpu(r.postSaturated, r.baselineForPost));
  push(['2', 'POST …/invocation, 50% of saturation', n0(r.postHalf.rps) + failures(r.postHalf), lat(r.postHalf), '', '']);
  push(['1', 'express "hello" (baseline), measured just before (3)', n0(r.baselineForGet.rps) + failures(r.baselineForGet), lat(r.baselineForGet), '', ''], cpu(r.baselineForGet));
  push(['3', 'GET …/invocation/{id}, saturation', n0(r.getSaturated.rps) + failures(r.getSaturated), lat(r.getSaturated), `of (1): ${pct(getRatio)} (information; target 2 below)`, ''], cpu(r.getSaturated, r.baselineForGet));
  push([
    '4',
    `end-to-end upper bound: POST at saturation, the executor running, then its drain; ${n0(e2e.completed)} COMPLETED ÷ first 201 → last COMPLETED (${n1(e2e.seconds)} s)`,
    n0(e2e.rps) + failures(e2e.load) + errored(e2e),
    '',
    '',
    '',
  ]);
  const tried = r.endToEndSustained.steps.map((step) => `${n0(step.rate)} ${step.kept ? '✓' : '✗'}`).join(', ');
  push(['4', `end-to-end capacity, sustained: the highest even POST rate whose invocations complete at ≥ 95% of it, every POST a 201 (tried for ${r.settings.durationSec} s each, in order: ${tried})`, n0(r.endToEndSustained.rate), '', '', '']);
  const e = r.endToEnd;
  push([
    '4',
    `queued invocation, 201 → COMPLETED (server timestamps), ${n0(e.rate)}/s (50% of the sustained capacity): ${e.pairs.length} rounds of ${r.settings.durationSec} s, each between two runs of direct calls; latency over every round`,
    `${n0(e.count)} runs` + failures(totals(e.loads)),
    lat(e),
    'target 4 below',
    '',
  ]);
  const legs = Object.entries(e.legs).map(([leg, v]) => `${leg} ${n1(v.p50)}/${n1(v.p99)}`).join(', ');
  push(['4', `… of which (p50/p99 ms): ${legs}`, '', '', '', '']);
  push([
    '4',
    `direct call to the model server (${model}), same input, ${n0(e.rate)}/s, before the first round and after each: ${r.directRuns.map(lat).join(', ')}`,
    n0(mean(r.directRuns.map((run) => run.rps))) + failures(totals(r.directRuns)),
    '',
    `${overText(e.over)}${floorUnitsText(inFloorUnits(e.over, f))}: ${roundsText(e.pairs)}`,
    '',
  ]);
  if (r.oneCall) push(oneCallRow(r.oneCall, model));
  push(
    [
      '5',
      `model server maximum (${model}, ${r.settings.executorConcurrency} connections, the executor paused): median of ${r.modelMaxRuns.length} runs between the drain's segments, in order ${r.modelMaxRuns.map(n0).join(', ')}`,
      n0(r.modelMax.rps) + failures(r.modelMax),
      lat(r.modelMax),
      '',
      '',
    ],
    cpu(r.modelMax),
  );
  push(
    ['5', `executor throughput (concurrency ${r.settings.executorConcurrency}, ${n0(r.executor.backlog)} queued)${segmentsText(r.executor)}`, n0(r.executor.rps) + errored(r.executor), '', `≥ 80% of the model server: ${pct(executorRatio)}`, judged(executorRatio >= 0.8, steal?.executor)],
    drainCpu(r.executor, r.modelMax),
  );
  for (const [name, bytes] of Object.entries(r.rssBytes)) {
    const api = API_PROCESSES.includes(name);
    push(['6', `peak RSS: ${name}`, `${n1(bytes / MiB)} MiB`, '', api ? `< ${RSS_BOUND / MiB} MiB` : '', api ? verdict(bytes < RSS_BOUND) : '']);
  }
  if (r.fairness) for (const cells of fairnessRows(r.fairness)) push(cells);
  if (r.notifications) for (const cells of notificationRows(r.notifications)) push(cells);
  if (r.tracing) rows.push(...tracingRows(r.tracing));
  const lines = tableLines(rows);
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(' ');
  lines.push(
    '',
    `${r.date}, ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}; load average before ${load(r.machine.loadavgBefore)}, after ${load(r.machine.loadavgAfter)};${stealText(r.machine.steal)}${gaugeText(r.machine.gaugeMs)} ` +
      `model server: ${model}; ${r.settings.connections} connections, ${r.settings.durationSec} s per figure, ${r.settings.sessions} sessions, log level ${r.settings.logLevel};${placementText(r.settings.placement)} PostgreSQL over ${r.settings.databaseTransport === 'socket' ? 'its Unix socket' : 'loopback TCP'}; API servers run with \`${r.settings.serverNodeOptions || 'no node options'}\`.`,
  );
  return lines.join('\n');
}

/** (4)'s POSTs with `Prefer: wait=waitSec`, timed by the client from request to answer, in rounds between direct runs. */
export interface OneCallLatency {
  rate: number;
  waitSec: number;
  loads: Brief[];
  pairs: LatencyPair[];
  directs: Brief[];
  over: Percentiles;
}

/** (4)'s row for a prediction in one call: how many were answered with their result (200) and the latency over direct calls. */
export function oneCallRow(o: OneCallLatency, model: string): string[] {
  const all = totals(o.loads);
  const answered = all.statuses['200'] ?? 0;
  const sent = Object.values(all.statuses).reduce((sum, count) => sum + count, 0);
  const early = Object.entries(all.statuses).filter(([code]) => code.startsWith('2') && code !== '200').reduce((sum, [, count]) => sum + count, 0);
  const queued = early ? `, ${n0(early)} answered before their result` : '';
  return [
    '4',
    `a prediction in one call: POST …/invocation with \`Prefer: wait=${o.waitSec}\`, request → 200 with the result (the client's clock), ${n0(o.rate)}/s: ${o.pairs.length} rounds, each between two runs of direct calls to the model server (${model}): ${o.directs.map(lat).join(', ')}`,
    `${n0(answered)} of ${n0(sent)} with their result${queued}` + failures(all),
    lat(percentilesOver(o.pairs)),
    `${overText(o.over)} over a direct call: ${roundsText(o.pairs)}`,
    '',
  ];
}

/** The one-call row alone under the table's header (BENCH_ONLY=one-call). */
export function oneCallTable(o: OneCallLatency, model: string): string {
  const cells = oneCallRow(o, model);
  return tableLines([[...cells.slice(0, 4), '', ...cells.slice(4)]]).join('\n');
}

/** The median p50 and p99 of the rounds themselves. */
const percentilesOver = (pairs: LatencyPair[]): Percentiles => ({ p50: median(pairs.map((pair) => pair.endToEnd.p50)), p99: median(pairs.map((pair) => pair.endToEnd.p99)) });

const HEADER = ['#', 'measure', 'req/s (or value)', 'p50 / p99 ms', 'server CPU µs/req', 'target', 'result'];
const tableLines = (rows: string[][]) => [HEADER, HEADER.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`);

/** (9)'s rows alone under the table's header (BENCH_ONLY=tracing). */
export const tracingTable = (t: TracingCostReport) => tableLines(tracingRows(t)).join('\n');

/** (9): each side's medians over the rounds, the spans it exported, and target 5 at the chart's sampler and recording every request; rows of all seven cells. */
export function tracingRows(t: TracingCostReport): string[][] {
  const both = (cpu: PostCpu) => `${n0(cpu.server)} + PostgreSQL ${n0(cpu.database)}`;
  const inOrder = (side: TracingSide) => t.rounds.map((round) => n0(round[side].server + round[side].database)).join(', ');
  const judgedText = (r: TargetResult) => [`≤ +${pct(r.bound - 1)}: ${r.value >= 1 ? '+' : ''}${pct(r.value - 1)} ± ${pct(r.spread)} (median of ${r.pairs.length} rounds ± half their range)`, r.verdict === 'missed' ? '**missed**' : r.verdict];
  const spans = (side: TracedSide) => `${t.spansPerPost[side].toFixed(2)} spans exported per POST`;
  return [
    ['9', `CPU µs per POST at ${n0(t.rate)}/s on an untraced public server: server + PostgreSQL, medians of ${t.rounds.length} rounds, each side's place rotating; totals in order ${inOrder('untraced')}`, '', '', both(t.medians.untraced), '', ''],
    ['9', `… sampling as the chart ships (parentbased_traceidratio ${t.chartRatio}), exporting OTLP/HTTP to a counting sink; ${spans('chart')}; totals in order ${inOrder('chart')}`, '', '', both(t.medians.chart), ...judgedText(t.targets.chart)],
    ['9', `… recording every request; ${spans('all')}, ${n0(t.usPerSpan)} µs of server CPU per exported span over untraced; totals in order ${inOrder('all')}`, '', '', both(t.medians.all), ...judgedText(t.targets.all)],
  ];
}

/** (8)'s rows alone under the table's header (BENCH_ONLY=notifications). */
export const notificationsTable = (n: NotificationsReport) => tableLines(notificationRows(n).map((cells) => [...cells.slice(0, 4), '', ...cells.slice(4)])).join('\n');

/** An overhead in the same run's floors: PostgreSQL round trips and broker hops (publish → delivery), p50 over p50 and p99 over p99. */
export function inFloorUnits(over: Percentiles, floors: BenchReport['floors']): { postgres: Percentiles; broker: Percentiles } {
  const units = (floor: Percentiles) => ({ p50: over.p50 / floor.p50, p99: over.p99 / floor.p99 });
  return { postgres: units(floors.postgres), broker: units(floors.broker.delivery) };
}

export const floorUnitsText = (u: ReturnType<typeof inFloorUnits>) =>
  ` (${n1(u.postgres.p50)} / ${n1(u.postgres.p99)} PostgreSQL round trips, ${n1(u.broker.p50)} / ${n1(u.broker.p99)} broker hops: (0)'s p50 / p99)`;

/** (7)'s rows: the single queue and the quiet workspace alone, then per flood its POSTs, its drain and the quiet workspace's waits. */
export const fairnessTable = (f: FairnessReport) => tableLines(fairnessRows(f)).join('\n');

export function fairnessRows(r: FairnessReport): string[][] {
  const rows: string[][] = [];
  const single = r.single.drain;
  const quietText = `${n0(r.quietRate)}/s for ${n0(r.quietSec)} s`;
  rows.push(['7', `fairness, single queue: one workspace drains ${n0(r.invocations)} queued (${r.modelLabel}), nobody else sending; ${n0(single.completed)} COMPLETED in ${n1(single.seconds)} s`, n0(single.rps) + errored(single), '', '', '']);
  rows.push(['7', `fairness, the quiet workspace alone: ${quietText}, queue wait (claimed − created) of ${n0(r.idle.count)} invocations`, n0(r.idle.load.rps) + failures(r.idle.load), lat(r.idle), '', '']);
  for (const flood of r.floods) {
    const v = floodVerdicts(r, flood);
    const who = `${n0(flood.workspaces)} workspace${flood.workspaces === 1 ? '' : 's'} flooding`;
    rows.push(['7', `${who}: POST of ${n0(r.invocations)} at saturation, the executor paused`, n0(flood.post.rps) + failures(flood.post), lat(flood.post), `≥ ${pct(POST_SHARE)} of (1) just before (7): ${pct(v.postRatio)}`, verdict(v.post)]);
    const against = flood.single ? `the single queue drained just before it (${n0(flood.single.rps)}/s)` : 'the single queue';
    rows.push(['7', `${who}: drain, first claim → last COMPLETED (${n1(flood.drain.seconds)} s), the quiet workspace's calls included${cpuText(flood.drain, flood.single)}`, n0(flood.drain.rps) + errored(flood.drain), '', `≥ ${pct(DRAIN_SHARE)} of ${against}: ${pct(v.drainRatio)}`, verdict(v.drain)]);
    rows.push([
      '7',
      `${who}: the quiet workspace's queue wait, ${quietText} (${n0(flood.quiet.count)} invocations)${slowestText(flood.quiet)}`,
      n0(flood.quiet.load.rps) + failures(flood.quiet.load),
      lat(flood.quiet),
      `p99 ≤ alone + one model call + ${QUIET_SLACK_MS} ms = ${n1(quietBoundMs(r))} ms`,
      verdict(v.quiet),
    ]);
  }
  return rows;
}

/** A drain's CPU per invocation, against its single queue's, when both were measured. */
function cpuText(drain: Drain, single: Drain | undefined): string {
  if (!drain.cpu || !single?.cpu) return '';
  const ms = (cpu: DrainCpu) => `${n2(cpu.executorMs)} / ${n2(cpu.databaseMs)}`;
  return `; CPU ms per invocation, executor / PostgreSQL: ${ms(drain.cpu)} (single queue ${ms(single.cpu)})`;
}

const PROBE_WORDS: Record<string, string> = {
  sse: 'the COMPLETED event of the session event stream at a client',
  webhook: "a webhook receiver's 2xx to the `invocation.completed` delivery",
};

/** (8)'s rows, one per probe: how many completions it heard of, and how long after the row's `completed_at`. */
export function notificationRows(r: NotificationsReport): string[][] {
  const sessions = `${n0(r.sessions)} session${r.sessions === 1 ? '' : 's'}`;
  const load = `POST ${n0(r.load.rps)}/s${failures(r.load)}`;
  return Object.entries(r.lags).map(([name, lag]) => [
    '8',
    `COMPLETED (the row's \`completed_at\`) → ${PROBE_WORDS[name] ?? name}, ${n0(r.rate)}/s (${r.rateFrom}) for ${n0(r.durationSec)} s over ${sessions}${name === 'sse' ? ', each followed by a stream' : ''}; clocks within ±${n1(r.clock.uncertaintyMs)} ms`,
    `${n0(lag.count)} heard${lag.missing ? ` (never heard: ${n0(lag.missing)})` : ''}; ${load}`,
    lat(lag),
    '',
    '',
  ]);
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
const overText = (over: Percentiles) => `${signed(over.p50)} / ${signed(over.p99)} ms`;

/** The statuses, errors and timeouts of several load runs together. */
export function totals(runs: Array<Pick<Brief, 'statuses' | 'errors' | 'timeouts'>>): Pick<Brief, 'statuses' | 'errors' | 'timeouts'> {
  const statuses: Record<string, number> = {};
  for (const run of runs) for (const [code, count] of Object.entries(run.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
  return { statuses, errors: runs.reduce((sum, run) => sum + run.errors, 0), timeouts: runs.reduce((sum, run) => sum + run.timeouts, 0) };
}

/** How (4)'s figure was taken: each round over the direct runs around it, and which figure counts. */
export function roundsText(pairs: LatencyPair[]): string {
  const each = pairs.map((pair) => `${lat(pair.endToEnd)} (${overText(pair.over)})`).join(', ');
  return `median over the rounds, each against the lower p50 and the lower p99 of the direct runs around it; in order ${each}`;
}

/** The footer's words for the CPU gauge before each figure; nothing for runs from before it was taken. */
export function gaugeText(gauges: GaugesMs | undefined): string {
  if (!gauges) return '';
  const points: Array<[keyof GaugesMs, string]> = [
    ['start', 'at the start'],
    ['post', 'before (2)'],
    ['get', '(3)'],
    ['executor', '(5)'],
    ['endToEnd', '(4)\'s latency'],
    ['end', 'at the end'],
  ];
  const taken = points.filter(([key]) => gauges[key] !== undefined).map(([key, words]) => `${words} ${n0(gauges[key]!)}`);
  return ` CPU gauge (ms for a fixed loop in the bench's process, lower is faster) ${taken.join(', ')};`;
}

/** The footer's words for where the model server and the executor ran; nothing for runs from before placement. */
export function placementText(placement: Placement | undefined): string {
  if (!placement) return '';
  if (placement.mode === 'shared') return ' every process where the scheduler put it (BENCH_PLACEMENT=shared);';
  const nice = placement.modelNice ? ` at nice ${placement.modelNice}` : '';
  return ` the model server bound to CPU ${placement.modelCpus}${nice} and the executor to CPU ${placement.executorCpus}, every other process where the scheduler put it (BENCH_PLACEMENT=split);`;
}

/** The footer's words for the VM's steal time during each figure; nothing for runs from before it was measured. */
export function stealText(steal: BenchReport['machine']['steal']): string {
  if (!steal) return '';
  const share = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : 'n/a');
  return ` CPU time taken by the hypervisor (steal) during (2) ${share(steal.post)}, (3) ${share(steal.get)}, (4)'s latency run ${share(steal.endToEnd)}, (5) ${share(steal.executor)};`;
}

/** Whether the slowest quiet call waited for the claim's order (others claimed meanwhile) or for a stall (none). */
function slowestText(waits: Waits): string {
  return waits.slowest ? `; the slowest waited ${n1(waits.slowest.waitMs)} ms while ${n0(waits.slowest.claimedMeanwhile)} others were claimed` : '';
}
