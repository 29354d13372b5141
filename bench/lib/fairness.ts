import type { Knex } from 'knex';
import { percentile, type Brief } from './load.js';

// The fairness section: workspaces flood the executor while one quiet
// workspace sends at a low rate. How long the quiet workspace's invocations
// wait for a claim, against the same on an idle platform, and how fast the
// flood drains, against one workspace draining the same backlog.

/** Queue waits (started_at − created_at, ms) of the invocations that started. */
export interface Waits {
  count: number;
  p50: number;
  p99: number;
  /** The longest wait, and how many other invocations were claimed while it waited: many, the claim's order kept it back; none, the platform stalled. */
  slowest?: { waitMs: number; claimedMeanwhile: number };
}

export interface Drain {
  /** The flood's invocations, and those of every workspace in the window, COMPLETED per second. */
  rps: number;
  /** First flood claim → last flood COMPLETED. */
  seconds: number;
  completed: number;
  failed: number;
  /** Absent in runs from before it was measured. */
  cpu?: DrainCpu;
}

/** CPU milliseconds per COMPLETED invocation during a drain: the executor's, and its PostgreSQL server's (every process of it). */
export interface DrainCpu {
  executorMs: number;
  databaseMs: number;
}

export interface FloodRow {
  workspaces: number;
  /** The flood's POSTs at saturation, the executor paused (as (2)). */
  post: Brief;
  drain: Drain;
  /** The single queue drained again just before this flood: its drain's denominator (absent in runs from before it). */
  single?: Drain;
  quiet: Waits & { load: Brief };
}

export interface FairnessReport {
  invocations: number;
  /** The quiet workspace's rate, requests per second. */
  quietRate: number;
  /** How long it sends during each flood (and alone). */
  quietSec: number;
  /** The fixed time of one model call (BENCH_MODEL_DELAY_MS), and the server that takes it. */
  modelMs: number;
  modelLabel: string;
  /** (1) measured just before the section: the denominator of each POST's ratio. */
  baseline: Brief;
  /** Today's single queue: one workspace drains the same backlog, nobody else sending. */
  single: { post: Brief; drain: Drain };
  /** The quiet workspace alone. */
  idle: Waits & { load: Brief };
  floods: FloodRow[];
}

/** The quiet workspace's p99 wait during a flood may exceed its idle p99 by one model call and this. */
export const QUIET_SLACK_MS = 250;
export const DRAIN_SHARE = 0.95;
/** (2)'s bar, the bench's first. */
export const POST_SHARE = 0.25;

export const quietBoundMs = (r: Pick<FairnessReport, 'idle' | 'modelMs'>) => r.idle.p99 + r.modelMs + QUIET_SLACK_MS;

/** The three targets of one flood row. */
export function floodVerdicts(r: FairnessReport, row: FloodRow) {
  const postRatio = row.post.rps / r.baseline.rps;
  const drainRatio = row.drain.rps / (row.single ?? r.single.drain).rps;
  return {
    postRatio,
    post: postRatio >= POST_SHARE,
    drainRatio,
    drain: drainRatio >= DRAIN_SHARE,
    quiet: row.quiet.p99 <= quietBoundMs(r),
  };
}

/** p50 and p99 of unsorted waits. */
export function waitsOf(values: number[]): Waits {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** Queue waits of the invocations of `sessionIds` that were claimed, and what was claimed while the slowest waited. */
export async function queueWaits(db: Knex, sessionIds: string[]): Promise<Waits> {
  const rows = (await db('invocations')
    .whereIn('session_id', sessionIds)
    .whereNotNull('started_at')
    .select('created_at', 'started_at', db.raw('extract(epoch from started_at - created_at) * 1000 as wait'))) as Array<{ created_at: Date; started_at: Date; wait: string }>;
  const waits = waitsOf(rows.map((row) => Number(row.wait)));
  const slowest = rows.reduce<(typeof rows)[number] | undefined>((max, row) => (max && Number(max.wait) >= Number(row.wait) ? max : row), undefined);
  if (!slowest) return waits;
  const meanwhile = (await db('invocations').where('started_at', '>', slowest.created_at).where('started_at', '<', slowest.started_at).count('* as n').first()) as { n: string | number };
  return { ...waits, slowest: { waitMs: Number(slowest.wait), claimedMeanwhile: Number(meanwhile.n) } };
}

/**
 * The flood's drain: from its first claim to its last COMPLETED, every
 * invocation COMPLETED in that window (the quiet workspace's too: they took
 * the executor's turns) per second.
 */
export async function drainOf(db: Knex, floodSessions: string[], otherSessions: string[]): Promise<Drain> {
  const window = (await db('invocations')
    .whereIn('session_id', floodSessions)
    .first(
      db.raw('min(started_at) as t0'),
      db.raw(`max(completed_at) filter (where status = 'COMPLETED') as t1`),
      db.raw(`count(*) filter (where status = 'ERROR')::int as failed`),
    )) as { t0: Date | null; t1: Date | null; failed: number };
  if (!window.t0 || !window.t1) return { rps: NaN, seconds: NaN, completed: 0, failed: window.failed };
  const row = (await db('invocations')
    .whereIn('session_id', [...floodSessions, ...otherSessions])
    .where({ status: 'COMPLETED' })
    .whereBetween('completed_at', [window.t0, window.t1])
    .count('* as n')
    .first()) as { n: string | number };
  const seconds = (window.t1.getTime() - window.t0.getTime()) / 1000;
  const completed = Number(row.n);
  return { rps: completed / seconds, seconds, completed, failed: window.failed };
}

/** What the section drives: the executor, the load, and the invocations' rows. */
export interface FairnessControl {
  pause(): void;
  resume(): void;
  /** Fresh sessions spread over the first `n` flooding workspaces, each with its workspace's headers. */
  floodTargets(n: number): Promise<Target[]>;
  /** Fresh sessions of the quiet workspace. */
  quietTargets(): Promise<Target[]>;
  /** `amount` POSTs at saturation over `targets`. */
  flood(targets: Target[], amount: number): Promise<Brief>;
  /** POSTs at the quiet rate over `targets` for `seconds`. */
  quiet(targets: Target[], seconds: number, rate: number): Promise<Brief>;
  waitFinal(sessionIds: string[], what: string): Promise<void>;
  waits(sessionIds: string[]): Promise<Waits>;
  drain(floodSessions: string[], otherSessions: string[]): Promise<Drain>;
  /** Starts counting CPU seconds of the executor and of PostgreSQL; the function returned gives them since. */
  cpuMeter(): () => { executor: number; database: number };
  log(message: string): void;
}

export interface Target {
  sessionId: string;
  path: string;
  headers: Record<string, string>;
}

const sessionsOf = (targets: Target[]) => targets.map((target) => target.sessionId);

/**
 * Today's single queue first (one workspace drains the backlog alone); the
 * quiet workspace alone, for as long as it will send during each flood; then
 * each flood, queued with the executor paused and drained while the quiet
 * workspace sends.
 */
export async function measureFairness(
  control: FairnessControl,
  options: { sizes: number[]; invocations: number; quietRate: number; modelMs: number; modelLabel: string; baseline: Brief },
): Promise<FairnessReport> {
  const queue = async (targets: Target[]) => {
    control.pause();
    try {
      return await control.flood(targets, options.invocations);
    } finally {
      control.resume();
    }
  };
  /** The drain of `flood` (with `others` completing meanwhile), its CPU per completion counted from `since`. */
  const drained = async (flood: string[], others: string[], since: () => { executor: number; database: number }): Promise<Drain> => {
    const spent = since();
    const drain = await control.drain(flood, others);
    return { ...drain, cpu: cpuPerCompletion(spent, drain.completed) };
  };
  const singleQueue = async () => {
    const soloTargets = await control.floodTargets(1);
    const post = await queue(soloTargets);
    const since = control.cpuMeter();
    await control.waitFinal(sessionsOf(soloTargets), 'the single queue to drain');
    return { post, drain: await drained(sessionsOf(soloTargets), [], since) };
  };
  control.log(`single queue: one workspace, ${options.invocations} invocations`);
  const single = await singleQueue();
  // Within the drain of every flood but the slowest: the quiet workspace's calls are measured while a backlog is there.
  const quietSec = Math.max(2, Math.floor(single.drain.seconds * 0.8));
  const quietRate = lowRate(options.quietRate, single.drain.rps, Math.max(...options.sizes));

  control.log(`the quiet workspace alone, ${quietRate}/s for ${quietSec} s`);
  const idleTargets = await control.quietTargets();
  const idleLoad = await control.quiet(idleTargets, quietSec, quietRate);
  await control.waitFinal(sessionsOf(idleTargets), 'the quiet workspace');
  const idle = { ...(await control.waits(sessionsOf(idleTargets))), load: idleLoad };

  const floods: FloodRow[] = [];
  for (const workspaces of options.sizes) {
    // The host's speed drifts over minutes: each flood's drain is set against a single queue drained just before it.
    control.log(`single queue again, before ${workspaces} workspaces flood`);
    const pairedSingle = await singleQueue();
    control.log(`${workspaces} workspaces flooding, the quiet one at ${quietRate}/s`);
    const floodTargets = await control.floodTargets(workspaces);
    const quietTargets = await control.quietTargets();
    const post = await queue(floodTargets);
    const since = control.cpuMeter();
    const [quietLoad] = await Promise.all([control.quiet(quietTargets, quietSec, quietRate), control.waitFinal(sessionsOf(floodTargets), `the flood of ${workspaces} workspaces`)]);
    await control.waitFinal(sessionsOf(quietTargets), 'the quiet workspace');
    floods.push({
      workspaces,
      post,
      drain: await drained(sessionsOf(floodTargets), sessionsOf(quietTargets), since),
      single: pairedSingle.drain,
      quiet: { ...(await control.waits(sessionsOf(quietTargets))), load: quietLoad },
    });
  }
  return { invocations: options.invocations, quietRate, quietSec, modelMs: options.modelMs, modelLabel: options.modelLabel, baseline: options.baseline, single, idle, floods };
}

/** CPU seconds spent over `completed` invocations, in milliseconds each. */
export function cpuPerCompletion(spent: { executor: number; database: number }, completed: number): DrainCpu {
  return { executorMs: (spent.executor * 1000) / completed, databaseMs: (spent.database * 1000) / completed };
}

/**
 * The quiet workspace's rate: at most `wanted`, and at most half its fair
 * share of the single queue's drain among `largest` flooding workspaces and
 * itself. Above its share a fair scheduler makes it wait behind its own
 * calls, which is fairness, not a fault; the bench asks whether a workspace
 * within its share is served as on an idle platform.
 */
export function lowRate(wanted: number, drainRps: number, largest: number): number {
  const share = drainRps / (largest + 1);
  return Math.max(0.5, Math.min(wanted, Math.floor((share / 2) * 10) / 10));
}
