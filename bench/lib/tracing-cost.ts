// (9) What tracing costs, the target 5: POST …/invocation at one
// fixed rate on three public servers of the same build and database, one
// untraced, one sampling as the chart ships (parentbased_traceidratio at its
// tracing.sampleRatio) and one recording every request, in rounds whose
// order rotates so that a drift of the host falls on every side alike. The
// figure is the CPU per POST of the server and of PostgreSQL: on a host
// shared with other work it is steadier than throughput, and on a CPU-bound
// host it is what throughput follows. Each traced server exports to an OTLP
// sink of its own that counts the spans (otlp-sink.ts): the CPU per
// exported span is the server's difference over the untraced one per span.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import type { Brief } from './load.js';
import { median } from './load.js';
import { startOtlpSink, type OtlpSink } from './otlp-sink.js';
import { judge, type TargetResult } from './verdict.js';

/** CPU per answered POST, µs: the public server's process and the PostgreSQL backends of the run's database. */
export interface PostCpu {
  server: number;
  database: number;
}

export type TracingSide = 'untraced' | 'chart' | 'all';
export type TracedSide = Exclude<TracingSide, 'untraced'>;
const SIDES: readonly TracingSide[] = ['untraced', 'chart', 'all'];

/** One side's run at the fixed rate. */
export interface SideRun extends PostCpu {
  /** POSTs answered. */
  requests: number;
}

export interface TracingCostControl {
  /** POSTs at the fixed rate for a round's duration on the server of `side`, with the CPU it and PostgreSQL spent. */
  run(side: TracingSide): Promise<SideRun>;
  /** Spans the server of `side` has exported so far, once its exporter has sent what it held. */
  exported(side: TracedSide): Promise<number>;
}

/** The bounds of target 5 on the CPU per POST, over the untraced server's. */
export const TRACING_BOUNDS: Record<TracedSide, number> = { chart: 0.05, all: 0.15 };

export interface TracingCostReport {
  /** POSTs per second of every run. */
  rate: number;
  /** The ratio the chart ships (tracing.sampleRatio), which the `chart` side samples at. */
  chartRatio: number;
  /** Every round, each side. */
  rounds: Array<Record<TracingSide, SideRun>>;
  /** Each side's medians over the rounds, each part on its own. */
  medians: Record<TracingSide, PostCpu>;
  /** Spans exported per POST over all rounds. */
  spansPerPost: Record<TracedSide, number>;
  /** Server CPU per exported span, µs: the median over the rounds of (every request recorded − untraced) per span; PostgreSQL does no span's work, only adds its noise. */
  usPerSpan: number;
  /** Target 5 at the chart's sampler and recording every request, each round's side against that round's untraced run. */
  targets: Record<TracedSide, TargetResult>;
}

const total = (cpu: PostCpu) => cpu.server + cpu.database;
const medianCpu = (cpus: PostCpu[]): PostCpu => ({ server: median(cpus.map((cpu) => cpu.server)), database: median(cpus.map((cpu) => cpu.database)) });

/** The order of round `round`: the sides rotated by one a round, so that each goes first, second and third alike. */
export const orderOf = (round: number): TracingSide[] => SIDES.map((_, index) => SIDES[(index + round) % SIDES.length]!);

/** `rounds` rounds of the three sides, and target 5 from them. */
export async function measureTracingCost(control: TracingCostControl, options: { rounds: number; rate: number; chartRatio: number }): Promise<TracingCostReport> {
  const exportedBefore = { chart: await control.exported('chart'), all: await control.exported('all') };
  const rounds: TracingCostReport['rounds'] = [];
  for (let round = 0; round < options.rounds; round++) {
    const runs: Partial<Record<TracingSide, SideRun>> = {};
    for (const side of orderOf(round)) runs[side] = await control.run(side);
    rounds.push(runs as Record<TracingSide, SideRun>);
  }
  const posts = (side: TracedSide) => rounds.reduce((sum, round) => sum + round[side].requests, 0);
  const spansPerPost = {
    chart: ((await control.exported('chart')) - exportedBefore.chart) / posts('chart'),
    all: ((await control.exported('all')) - exportedBefore.all) / posts('all'),
  };
  const target = (side: TracedSide, label: string) =>
    judge(
      { id: '5', what: `CPU per POST at ${options.rate}/s, server + PostgreSQL, µs: ${label}`, baselineName: 'untraced', comparison: 'ratio', bound: 1 + TRACING_BOUNDS[side], better: 'lower' },
      rounds.map((round) => ({ baseline: total(round.untraced), didyma: total(round[side]) })),
    );
  return {
    rate: options.rate,
    chartRatio: options.chartRatio,
    rounds,
    medians: { untraced: medianCpu(rounds.map((r) => r.untraced)), chart: medianCpu(rounds.map((r) => r.chart)), all: medianCpu(rounds.map((r) => r.all)) },
    spansPerPost,
    usPerSpan: median(rounds.map((round) => (round.all.server - round.untraced.server) / spansPerPost.all)),
    targets: { chart: target('chart', `the chart's sampler (${options.chartRatio} of the traces)`), all: target('all', 'every request recorded') },
  };
}

/** The sampler ratio the chart ships: `tracing.sampleRatio` of its values. */
export function chartSampleRatio(valuesFile = 'charts/didyma/values.yaml'): number {
  return Number((YAML.parse(fs.readFileSync(valuesFile, 'utf8')) as { tracing: { sampleRatio: string | number } }).tracing.sampleRatio);
}

/** What a side's server samples, in the standard variables. */
export const samplerEnv = (ratio: number) => ({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(ratio) });

/** A public server the bench started, to POST to and measure. */
export interface BenchServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export interface TracingSectionDeps {
  /** The platform's public server, untraced. */
  untraced: Omit<BenchServer, 'stop'>;
  /** Starts another public server of the same build and database with `env` added, ready. */
  startServer(name: string, env: Record<string, string>): Promise<BenchServer>;
  /** POSTs for `durationSec` to the server at `url`, at `rate` a second if given (else at saturation). */
  post(url: string, durationSec: number, rate?: number): Promise<Brief>;
  /** CPU counters: of processes `pids` (seconds each), and of the run database's PostgreSQL backends (seconds). */
  cpuSince(pids: number[]): () => number[];
  databaseCpuSince(): () => number;
}

// The Node SDK's batch span processor sends at most this long after a span ends (OTEL_BSP_SCHEDULE_DELAY's default), plus a margin.
const EXPORT_SETTLE_MS = 6_000;

/**
 * Section (9): starts the traced servers, each exporting to its own sink,
 * warms every server, then measures. The traced servers keep the SDK's
 * export defaults (protobuf, batches), as a deployment of the chart does.
 */
export async function tracingSection(deps: TracingSectionDeps, options: { rounds: number; rate: number; durationSec: number; warmupSec: number }): Promise<TracingCostReport> {
  const chartRatio = chartSampleRatio();
  const sinks: Partial<Record<TracedSide, OtlpSink>> = {};
  const servers: Partial<Record<TracingSide, Omit<BenchServer, 'stop'>>> = { untraced: deps.untraced };
  const started: BenchServer[] = [];
  try {
    for (const [side, ratio] of [['chart', chartRatio], ['all', 1]] as const) {
      const sink = (sinks[side] = await startOtlpSink());
      const env = { ...samplerEnv(ratio), OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: `didyma-bench-public-${side}` };
      const server = await deps.startServer(`public-traced-${side}`, env);
      started.push(server);
      servers[side] = server;
    }
    // Every server warm: the rounds compare the servers, not one's JIT and caches with another's.
    for (const side of SIDES) await deps.post(servers[side]!.url, options.warmupSec);
    const control: TracingCostControl = {
      run: async (side) => {
        const server = deps.cpuSince([servers[side]!.pid]);
        const database = deps.databaseCpuSince();
        const { requests } = await deps.post(servers[side]!.url, options.durationSec, options.rate);
        return { requests, server: (server()[0]! * 1e6) / requests, database: (database() * 1e6) / requests };
      },
      exported: async (side) => {
        await sleep(EXPORT_SETTLE_MS);
        return sinks[side]!.spans();
      },
    };
    return await measureTracingCost(control, { rounds: options.rounds, rate: options.rate, chartRatio });
  } finally {
    for (const server of started) await server.stop();
    for (const sink of Object.values(sinks)) await sink.close();
  }
}
