import { median } from './load.js';
import type { Brief } from './load.js';

// (4) the end-to-end latency of a queued invocation against direct calls to
// the model server at the same rate, taken in turns: direct, end-to-end,
// direct, end-to-end, …, direct. This VM's speed drifts within a minute, and
// one end-to-end run between a single direct run before and one after set a
// slow phase against a fast one. Here each round is set against the lower of
// the direct runs just before and after it (the stricter reference), and the
// median of the rounds' differences is the figure.

export interface Percentiles {
  p50: number;
  p99: number;
}

/** One round of queued invocations at the rate, waited for until every one is final. */
export interface EndToEndRound extends Percentiles {
  count: number;
}

export interface LatencyControl {
  /** Direct calls to the model server at the rate, with the same input. */
  direct(): Promise<Brief>;
  endToEnd(): Promise<EndToEndRound>;
}

export interface LatencyPair {
  endToEnd: EndToEndRound;
  /** The lower p50 and the lower p99 of the direct runs just before and after the round. */
  direct: Percentiles;
  /** endToEnd − direct, in ms. */
  over: Percentiles;
}

export interface PairedLatency {
  pairs: LatencyPair[];
  /** Every direct run, in order: one before each round and one after the last. */
  directs: Brief[];
  /** The medians of the pairs' differences: the figure the targets are set against. */
  over: Percentiles;
}

export async function pairedLatency(control: LatencyControl, rounds: number): Promise<PairedLatency> {
  if (rounds < 1) throw new Error('pairedLatency needs at least one round');
  const directs = [await control.direct()];
  const runs: EndToEndRound[] = [];
  for (let round = 0; round < rounds; round++) {
    runs.push(await control.endToEnd());
    directs.push(await control.direct());
  }
  const pairs = runs.map((run, index) => pairOf(run, directs[index]!, directs[index + 1]!));
  return {
    pairs,
    directs,
    over: { p50: median(pairs.map((pair) => pair.over.p50)), p99: median(pairs.map((pair) => pair.over.p99)) },
  };
}

function pairOf(run: EndToEndRound, before: Brief, after: Brief): LatencyPair {
  const direct = { p50: Math.min(before.p50, after.p50), p99: Math.min(before.p99, after.p99) };
  return { endToEnd: run, direct, over: { p50: run.p50 - direct.p50, p99: run.p99 - direct.p99 } };
}

