import type { Brief } from './load.js';
import type { Throughput } from './invocations.js';

// What the whole path sustains: POST and execution sharing the machine at an
// even rate, as they do in steady state. POST at saturation followed by the
// executor's drain gives an upper bound only: the drain has the machine to
// itself once the POSTs stop, and its batches are full.

/** A run at one rate: the POST load, and what became of the invocations it created. */
export interface RateRun {
  load: Brief;
  throughput: Throughput;
}

export interface CapacityStep {
  rate: number;
  /** Completed per second from the first 201 to the last COMPLETED. */
  completedPerSec: number;
  kept: boolean;
}

export interface SustainedCapacity {
  /** The highest rate that was kept up with. */
  rate: number;
  steps: CapacityStep[];
}

/** Share of the offered rate that must complete per second, with every POST answered 201 and none in ERROR. */
const KEPT_SHARE = 0.95;
/** Halvings tried below the first guess before giving up. */
const MAX_HALVINGS = 3;

export function keptUp(rate: number, run: RateRun): boolean {
  const allCreated = Object.entries(run.load.statuses).every(([code]) => code === '201') && !run.load.errors && !run.load.timeouts;
  return allCreated && run.throughput.failed === 0 && run.throughput.rps >= KEPT_SHARE * rate;
}

/**
 * `upperBound` itself when it is kept up with; otherwise bisection between a
 * quarter of it (halved until kept up with) and it, `bisections` times. Every
 * step is a fresh run of `runAt`.
 */
export async function sustainedCapacity(upperBound: number, bisections: number, runAt: (rate: number) => Promise<RateRun>): Promise<SustainedCapacity> {
  const steps: CapacityStep[] = [];
  const attempt = async (rate: number) => {
    const run = await runAt(rate);
    const step = { rate, completedPerSec: run.throughput.rps, kept: keptUp(rate, run) };
    steps.push(step);
    return step.kept;
  };
  let high = Math.max(1, Math.round(upperBound));
  if (await attempt(high)) return { rate: high, steps };
  let low = Math.max(1, Math.round(high / 4));
  for (let halvings = 0; !(await attempt(low)); halvings += 1) {
    if (halvings === MAX_HALVINGS || low === 1) return { rate: 0, steps };
    high = low;
    low = Math.max(1, Math.round(low / 2));
  }
  for (let step = 0; step < bisections && high - low > 1; step += 1) {
    const middle = Math.round((low + high) / 2);
    if (await attempt(middle)) low = middle;
    else high = middle;
  }
  return { rate: low, steps };
}
