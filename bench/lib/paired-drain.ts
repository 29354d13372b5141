import { median } from './load.js';
import type { Brief } from './load.js';

// (5) the executor's throughput against the model server's own maximum, taken
// in pairs. This VM's speed drifts by a third within a minute (one maximum was
// 473/s before a drain and 704/s after it), so a drain and a maximum measured
// a minute apart compare two different machines. Here the drain runs in
// segments; between them the executor is paused (SIGSTOP) and the model server
// driven directly. Each segment is set against the mean of the maxima just
// before and after it, and the median of those ratios is the figure.

export interface DrainControl {
  /** Freezes the executor (its leases outlast a pause) and lets it go on. */
  pause(): void;
  resume(): void;
  /** The model server driven directly at the executor's concurrency, the executor paused. */
  measureMax(): Promise<Brief>;
  /** Invocations of the backlog COMPLETED in [from, to), by their completed_at. */
  completedBetween(from: Date, to: Date): Promise<number>;
  /** Invocations of the backlog still QUEUED. */
  queued(): Promise<number>;
  /** Starts counting the CPU of the executor and of the model server; the function returned gives their seconds since. */
  cpuSince(): () => [number, number];
}

export interface PairedDrainOptions {
  /** The executor runs this long, unmeasured, before the first pause: it starts cold. */
  warmUpSec: number;
  segmentSec: number;
  maxSegments: number;
  /** After a pause or a resume: the calls in flight finish, the executor picks up again. */
  settleMs: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
}

export interface DrainSegment {
  from: string;
  to: string;
  completed: number;
  rps: number;
  /** The model server's maximum (req/s) just before and just after the segment. */
  maxBefore: number;
  maxAfter: number;
  /** rps ÷ the mean of maxBefore and maxAfter. */
  ratio: number;
}

export interface PairedDrain {
  segments: DrainSegment[];
  /** Every maximum, in order: one before each segment and one after the last. */
  maxima: Brief[];
  /** Medians: of the segments' rates, of their ratios, and the maximum whose rate is the median. */
  rps: number;
  ratio: number;
  modelMax: Brief;
  /** Over the segments: the executor's CPU per invocation, the model server's per call (µs). */
  cpuUsPerInvocation: number;
  modelCpuUsPerCall: number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs the drain in up to `maxSegments` segments with a maximum before each
 * and after the last. A segment starts only while the backlog holds a third
 * more than the last segment drained, so the executor never runs dry inside
 * one. The executor is left running (resumed) to finish the backlog.
 */
export async function pairedDrain(control: DrainControl, options: PairedDrainOptions): Promise<PairedDrain> {
  const sleep = options.sleep ?? defaultSleep;
  await sleep(options.warmUpSec * 1000);
  const maxima: Brief[] = [];
  const runs: SegmentRun[] = [];
  try {
    control.pause();
    await sleep(options.settleMs);
    maxima.push(await control.measureMax());
    while (runs.length < options.maxSegments) {
      const expected = (runs.at(-1)?.completed ?? maxima[0]!.rps * options.segmentSec) * (4 / 3);
      if ((await control.queued()) < expected) break;
      runs.push(await runSegment(control, options, sleep));
      maxima.push(await control.measureMax());
    }
  } finally {
    control.resume(); // also when a measurement failed: a stopped process would not even stop
  }
  const segments = runs.map((run, index) => segmentOf(run, maxima[index]!.rps, maxima[index + 1]!.rps));
  const completed = runs.reduce((sum, run) => sum + run.completed, 0);
  const cpuSeconds = (which: 0 | 1) => runs.reduce((sum, run) => sum + run.cpu[which], 0);
  return {
    segments,
    maxima,
    rps: median(segments.map((segment) => segment.rps)),
    ratio: median(segments.map((segment) => segment.ratio)),
    modelMax: medianRun(maxima),
    cpuUsPerInvocation: (cpuSeconds(0) * 1e6) / completed,
    modelCpuUsPerCall: (cpuSeconds(1) * 1e6) / completed,
  };
}

interface SegmentRun {
  from: Date;
  to: Date;
  completed: number;
  /** CPU seconds of the executor and of the model server inside the window. */
  cpu: [number, number];
}

/** One segment: resume, let the executor pick up, count a window of `segmentSec`, pause again. */
async function runSegment(control: DrainControl, options: PairedDrainOptions, sleep: (ms: number) => Promise<void>): Promise<SegmentRun> {
  const now = options.now ?? (() => new Date());
  control.resume();
  await sleep(options.settleMs);
  const spent = control.cpuSince();
  const from = now();
  await sleep(options.segmentSec * 1000);
  const to = now();
  control.pause();
  const cpu = spent();
  await sleep(options.settleMs); // completions inside the window are all committed before they are counted
  return { from, to, completed: await control.completedBetween(from, to), cpu };
}

function segmentOf(run: SegmentRun, maxBefore: number, maxAfter: number): DrainSegment {
  const rps = run.completed / ((run.to.getTime() - run.from.getTime()) / 1000);
  return { from: run.from.toISOString(), to: run.to.toISOString(), completed: run.completed, rps, maxBefore, maxAfter, ratio: rps / ((maxBefore + maxAfter) / 2) };
}

/** The run whose rate is the median (the lower middle one of an even count). */
function medianRun(runs: Brief[]): Brief {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.ceil(sorted.length / 2) - 1]!;
}
