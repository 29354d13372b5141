// (9) What tracing costs: POST …/invocation on two public servers of the same
// build and database, one untraced and one exporting every span to Jaeger, in
// alternating rounds so that a drift of the host falls on both alike. Each
// round runs both at saturation (throughput) and at one fixed, moderate rate
// (CPU per POST of the server and of PostgreSQL): on a host shared with other
// work the CPU a POST takes is the steadier figure, and on a CPU-bound host it
// is what throughput follows.
import type { Brief } from './load.js';

/** CPU per answered POST, µs: the public server's process and the PostgreSQL backends of the run's database. */
export interface PostCpu {
  server: number;
  database: number;
}

export interface TracingCostControl {
  /** POST at saturation for the round's duration on the untraced server. */
  untraced(): Promise<Brief>;
  /** The same on the server that traces and exports. */
  traced(): Promise<Brief>;
  /** POST at the fixed rate on the untraced server, measuring the CPU it and PostgreSQL spend. */
  untracedCpu(): Promise<PostCpu>;
  /** The same on the traced server. */
  tracedCpu(): Promise<PostCpu>;
}

interface Side {
  saturated: Brief;
  cpu: PostCpu;
}

/** The traced server's sampler: its variables, and how the table names it. */
export interface TracingSampling {
  label: string;
  env: Record<string, string>;
}

export interface TracingCostReport {
  /** What the traced server recorded; absent in runs from before it was chosen, which recorded every request. */
  sampling?: string;
  rounds: Array<{ untraced: Brief; traced: Brief; untracedCpu: PostCpu; tracedCpu: PostCpu }>;
  untracedRps: number;
  tracedRps: number;
  /** 1 − traced / untraced, of the medians: the share of throughput tracing took. */
  cost: number;
  /** POSTs per second of the CPU rounds. */
  cpuRate: number;
  /** Medians over the rounds, each part on its own. */
  untracedCpu: PostCpu;
  tracedCpu: PostCpu;
  /** The CPU tracing adds to a POST, server and PostgreSQL together: the median over the rounds of traced / untraced − 1, each round against itself so that a drift of the host cancels. */
  cpuCost: number;
}

/** The bound the issue sets: tracing may take at most 5% of the throughput. */
export const TRACING_COST_BOUND = 0.05;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const medianCpu = (cpus: PostCpu[]): PostCpu => ({ server: median(cpus.map((cpu) => cpu.server)), database: median(cpus.map((cpu) => cpu.database)) });

async function side(saturated: () => Promise<Brief>, cpu: () => Promise<PostCpu>): Promise<Side> {
  return { saturated: await saturated(), cpu: await cpu() };
}

/** `rounds` pairs, the first of each pair alternating, and the costs from the medians of each side. */
export async function measureTracingCost(control: TracingCostControl, rounds: number, cpuRate: number, sampling: TracingSampling): Promise<TracingCostReport> {
  const measured: TracingCostReport['rounds'] = [];
  const off = () => side(control.untraced, control.untracedCpu);
  const on = () => side(control.traced, control.tracedCpu);
  for (let round = 0; round < rounds; round++) {
    let untraced: Side, traced: Side;
    if (round % 2 === 0) {
      untraced = await off();
      traced = await on();
    } else {
      traced = await on();
      untraced = await off();
    }
    measured.push({ untraced: untraced.saturated, traced: traced.saturated, untracedCpu: untraced.cpu, tracedCpu: traced.cpu });
  }
  const untracedRps = median(measured.map((pair) => pair.untraced.rps));
  const tracedRps = median(measured.map((pair) => pair.traced.rps));
  const untracedCpu = medianCpu(measured.map((pair) => pair.untracedCpu));
  const tracedCpu = medianCpu(measured.map((pair) => pair.tracedCpu));
  const total = (cpu: PostCpu) => cpu.server + cpu.database;
  const cpuCost = median(measured.map((pair) => total(pair.tracedCpu) / total(pair.untracedCpu) - 1));
  return { sampling: sampling.label, rounds: measured, untracedRps, tracedRps, cost: 1 - tracedRps / untracedRps, cpuRate, untracedCpu, tracedCpu, cpuCost };
}
