import type { GroupSeconds } from './cpu.js';
import type { Brief } from './load.js';

// The queue comparison (bench/baselines/): didyma against what a team would
// write by hand or take from a library, on the same host in the same run.
// Every figure is taken in rounds interleaved with its baselines (baseline,
// didyma, baseline, didyma, …), so that each pair sees the same machine; the
// targets (bench/lib/targets.ts) take the median of the pairs and their spread.

/** A load run at saturation with the CPU of every process group, in µs per request. */
export interface MeasuredRun {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  cpuUsPerRequest: GroupSeconds;
}

/** Something serving requests: its load at saturation, and the CPU it spent meanwhile. */
export interface Served {
  load(durationSec: number): Promise<Brief>;
  /** Starts counting the CPU of every group while it serves; the function gives the seconds since. */
  meter(): () => GroupSeconds;
}

/** A queue and its consumer, driven by the section: its backlog is made through its own enqueue, its consumer paused meanwhile. */
export interface DrainContender {
  /** Enqueues `count` calls through its own API, its consumer paused. */
  fill(count: number): Promise<void>;
  pause(): void;
  resume(): void;
  /** Calls not claimed yet, and calls not final yet. */
  queued(): Promise<number>;
  open(): Promise<number>;
  /** Calls completed in [from, to), by the database's completion time. */
  completedBetween(from: Date, to: Date): Promise<number>;
  /** Starts counting the CPU of its consumer, PostgreSQL and the model server; the function gives the seconds since. */
  meter(): () => DrainSeconds;
}

export interface DrainSeconds {
  consumer: number;
  postgres: number;
  model: number;
}

export interface DrainRun {
  backlog: number;
  completed: number;
  seconds: number;
  rps: number;
  /** Whether the backlog ran out before the window's end (the window was cut short). */
  ranDry: boolean;
  cpuUsPerInvocation: DrainSeconds;
}

export interface DrainOptions {
  warmUpSec: number;
  windowSec: number;
  /** The backlog of a contender's first round; later rounds hold enough for its last rate over warm-up and window, and a third more. */
  firstBacklog: number;
  /** The window ends early when fewer than this many calls are left unclaimed. */
  slack: number;
  pollMs: number;
  timeoutMs: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One run of `served` at saturation for `durationSec`, with its CPU per request by group. */
export async function measuredRun(served: Served, durationSec: number): Promise<MeasuredRun> {
  const spent = served.meter();
  const result = await served.load(durationSec);
  const seconds = spent();
  const perRequest = (value: number) => (value * 1e6) / result.requests;
  return {
    rps: result.rps,
    requests: result.requests,
    p50: result.p50,
    p99: result.p99,
    statuses: result.statuses,
    cpuUsPerRequest: { server: perRequest(seconds.server), postgres: perRequest(seconds.postgres), rabbitmq: perRequest(seconds.rabbitmq), load: perRequest(seconds.load) },
  };
}

/** `rounds` rounds of every contender in turn, in the order given: the first is the baseline each round starts with. */
export async function interleaved<K extends string, R>(order: K[], rounds: number, runOne: (name: K, round: number) => Promise<R>): Promise<Record<K, R[]>> {
  const runs = Object.fromEntries(order.map((name) => [name, [] as R[]])) as Record<K, R[]>;
  for (let round = 0; round < rounds; round++) for (const name of order) runs[name].push(await runOne(name, round));
  return runs;
}

/**
 * One drain round: the contender's backlog is filled with its consumer
 * paused, the consumer resumed and warmed up, then completions are counted
 * over a window (cut short when the backlog is nearly out); the rest of the
 * backlog is drained before the consumer is paused again, so no round leaves
 * work to the next.
 */
export async function drainRound(contender: DrainContender, backlog: number, options: DrainOptions): Promise<DrainRun> {
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? (() => new Date());
  contender.pause();
  await contender.fill(backlog);
  contender.resume();
  try {
    await sleep(options.warmUpSec * 1000);
    const spent = contender.meter();
    const from = now();
    let ranDry = false;
    while (now().getTime() - from.getTime() < options.windowSec * 1000) {
      await sleep(options.pollMs);
      if ((await contender.queued()) < options.slack) {
        ranDry = true;
        break;
      }
    }
    const to = now();
    const cpu = spent();
    const deadline = Date.now() + options.timeoutMs;
    while ((await contender.open()) > 0) {
      if (Date.now() > deadline) throw new Error(`a drain round did not finish its backlog of ${backlog} within ${options.timeoutMs} ms`);
      await sleep(options.pollMs);
    }
    const completed = await contender.completedBetween(from, to);
    const seconds = (to.getTime() - from.getTime()) / 1000;
    const perInvocation = (value: number) => (value * 1e6) / completed;
    return { backlog, completed, seconds, rps: completed / seconds, ranDry, cpuUsPerInvocation: { consumer: perInvocation(cpu.consumer), postgres: perInvocation(cpu.postgres), model: perInvocation(cpu.model) } };
  } finally {
    contender.pause();
  }
}

/** The backlog of a contender's next round: enough for its last rate over warm-up and window, a third more, at least `firstBacklog` the first time. */
export function nextBacklog(last: DrainRun | undefined, options: Pick<DrainOptions, 'warmUpSec' | 'windowSec' | 'firstBacklog' | 'slack'>): number {
  if (!last || !Number.isFinite(last.rps) || last.rps <= 0) return options.firstBacklog;
  return Math.ceil(last.rps * (options.warmUpSec + options.windowSec) * (4 / 3)) + options.slack;
}

/** How often a round whose backlog ran out in the first half of its window is taken again, with twice the backlog. */
const REFILLS = 3;

/**
 * Drain rounds of every contender in turn, each contender's backlog sized
 * from its own last round. A round whose backlog ran out before half its
 * window measured the warm-up's tail, not a drain: it is taken again with a
 * backlog twice as large (up to REFILLS times).
 */
export async function interleavedDrains<K extends string>(contenders: Record<K, DrainContender>, order: K[], rounds: number, options: DrainOptions, log: (message: string) => void): Promise<Record<K, DrainRun[]>> {
  const last = new Map<K, DrainRun>();
  return interleaved(order, rounds, async (name, round) => {
    let backlog = nextBacklog(last.get(name), options);
    let run = await drainRound(contenders[name], backlog, options);
    for (let refill = 0; refill < REFILLS && run.ranDry && run.seconds < options.windowSec / 2; refill++) {
      backlog = Math.max(2 * backlog, nextBacklog(run, options));
      log(`round ${round + 1}, ${name}: the backlog ran out ${run.seconds.toFixed(1)} s into the window, again with ${backlog}`);
      run = await drainRound(contenders[name], backlog, options);
    }
    last.set(name, run);
    log(`round ${round + 1}, ${name}: ${Math.round(run.rps)}/s over ${run.seconds.toFixed(1)} s${run.ranDry ? ' (ran dry)' : ''}, PostgreSQL ${Math.round(run.cpuUsPerInvocation.postgres)} µs per invocation`);
    return run;
  });
}
