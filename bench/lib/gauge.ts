// The VM's speed, from a fixed piece of CPU work timed in the bench's own
// process while nothing else of the run is busy. This host's speed changes by
// up to five times within an hour, and not always as steal time (one run had
// every process spend twice its usual CPU per request with 0.1% stolen): the
// gauge taken before each figure tells which figures shared a phase.

let sink = 0; // keeps the loop's result alive, so the compiler cannot drop the work

function spin(iterations: number): number {
  let x = 0;
  for (let i = 0; i < iterations; i++) x += i % 7;
  return x;
}

/** The fastest of `repeats` timings of the same loop, in ms: a preemption in one of them does not count. */
export function cpuGaugeMs(iterations = 50_000_000, repeats = 3): number {
  let best = Infinity;
  for (let repeat = 0; repeat < repeats; repeat++) {
    const started = performance.now();
    sink += spin(iterations);
    best = Math.min(best, performance.now() - started);
  }
  return sink >= 0 ? best : NaN;
}
