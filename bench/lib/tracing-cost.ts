// (9) What tracing costs: POST …/invocation at saturation on two public servers
// of the same build and database, one untraced and one exporting every span to
// Jaeger, in alternating rounds so that a drift of the host falls on both alike.
import type { Brief } from './load.js';

export interface TracingCostControl {
  /** POST at saturation for the round's duration on the untraced server. */
  untraced(): Promise<Brief>;
  /** The same on the server that traces and exports. */
  traced(): Promise<Brief>;
}

export interface TracingCostReport {
  rounds: Array<{ untraced: Brief; traced: Brief }>;
  untracedRps: number;
  tracedRps: number;
  /** 1 − traced / untraced, of the medians: the share of throughput tracing takes. */
  cost: number;
}

/** The bound the issue sets: tracing may take at most 5% of the throughput. */
export const TRACING_COST_BOUND = 0.05;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** `rounds` pairs, the first of each pair alternating, and the cost from the medians of each side. */
export async function measureTracingCost(control: TracingCostControl, rounds: number): Promise<TracingCostReport> {
  const measured: TracingCostReport['rounds'] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      const untraced = await control.untraced();
      measured.push({ untraced, traced: await control.traced() });
    } else {
      const traced = await control.traced();
      measured.push({ untraced: await control.untraced(), traced });
    }
  }
  const untracedRps = median(measured.map((pair) => pair.untraced.rps));
  const tracedRps = median(measured.map((pair) => pair.traced.rps));
  return { rounds: measured, untracedRps, tracedRps, cost: 1 - tracedRps / untracedRps };
}
