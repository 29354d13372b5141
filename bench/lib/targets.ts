import { median } from './load.js';
import type { LatencyPair } from './paired-latency.js';
import type { DrainRun, MeasuredRun } from './queues.js';
import { judge, judgeAbsolute, type Pair, type TargetResult } from './verdict.js';

// The targets 1–4 and 6, each set against a baseline of the same run
// (bench/lib/verdict.ts judges them), and the table of the figures behind them.

export type EnqueueName = 'naive' | 'didyma' | 'jobQueue';
export type ReadName = 'naive' | 'didyma';
export type DrainName = 'naive' | 'didyma' | 'jobQueue' | 'fifo';

/** The queue comparison of one run (bench/lib/queues.ts): every round of every contender. */
export interface QueuesReport {
  rounds: number;
  durationSec: number;
  enqueue: Record<EnqueueName, MeasuredRun[]>;
  read: Record<ReadName, MeasuredRun[]>;
  drains: Array<{ model: string; directP50: number; runs: Record<DrainName, DrainRun[]> }>;
}

export const LABELS = {
  enqueue: { naive: 'naive enqueue', didyma: 'didyma POST', jobQueue: 'pg-boss send' },
  read: { naive: 'naive read', didyma: 'didyma GET' },
  drain: { naive: 'naive executor', didyma: 'didyma executor', jobQueue: 'pg-boss worker', fifo: 'FIFO claim, platform table' },
} as const;

/** Peak RSS bound of every platform process (target 6), bytes. */
export const RSS_BOUND = 150 * 1024 * 1024;
/** Fairness's own cost (target 3): the fair claim drains at least this share of a FIFO claim's rate. */
export const FAIRNESS_SHARE = 0.9;
/** PostgreSQL CPU per invocation of the executor (target 3) against the naive executor's. */
export const POSTGRES_PER_INVOCATION = 1.25;
/** Target 4: p50 within this many times the floors of a queued call over a direct one; p99 within this many ms. */
export const FLOOR_FACTOR = 1.5;
export const P99_SLACK_MS = 25;

const zip = (baseline: number[], didyma: number[]): Pair[] => didyma.slice(0, baseline.length).map((value, index) => ({ baseline: baseline[index]!, didyma: value }));
const stackUs = (run: MeasuredRun) => run.cpuUsPerRequest.server + run.cpuUsPerRequest.postgres + run.cpuUsPerRequest.rabbitmq;

/** Targets 1, 2 and 3 from the queue comparison. */
export function queueTargets(q: QueuesReport): TargetResult[] {
  const { enqueue, read } = q;
  const targets = [
    judge({ id: '1', what: 'POST at saturation, req/s', baselineName: LABELS.enqueue.naive, comparison: 'ratio', bound: 1, better: 'higher' }, zip(enqueue.naive.map((r) => r.rps), enqueue.didyma.map((r) => r.rps))),
    judge(
      { id: '1', what: 'CPU per POST, server + PostgreSQL + RabbitMQ, µs', baselineName: LABELS.enqueue.naive, comparison: 'ratio', bound: 1, better: 'lower' },
      zip(enqueue.naive.map(stackUs), enqueue.didyma.map(stackUs)),
    ),
    judge({ id: '2', what: 'GET by id at saturation, req/s', baselineName: LABELS.read.naive, comparison: 'ratio', bound: 1, better: 'higher' }, zip(read.naive.map((r) => r.rps), read.didyma.map((r) => r.rps))),
  ];
  for (const drain of q.drains) {
    const rps = (name: DrainName) => drain.runs[name].map((run) => run.rps);
    const postgres = (name: DrainName) => drain.runs[name].map((run) => run.cpuUsPerInvocation.postgres);
    targets.push(
      judge({ id: '3', what: `drain, ${drain.model}, invocations/s`, baselineName: LABELS.drain.jobQueue, comparison: 'ratio', bound: 1, better: 'higher' }, zip(rps('jobQueue'), rps('didyma'))),
      judge({ id: '3', what: `drain, ${drain.model}, invocations/s`, baselineName: LABELS.drain.naive, comparison: 'ratio', bound: 1, better: 'higher' }, zip(rps('naive'), rps('didyma'))),
      judge(
        { id: '3', what: `drain, ${drain.model}, PostgreSQL CPU per invocation, µs`, baselineName: LABELS.drain.naive, comparison: 'ratio', bound: POSTGRES_PER_INVOCATION, better: 'lower' },
        zip(postgres('naive'), postgres('didyma')),
      ),
      judge(
        { id: '3', what: `drain, ${drain.model}: fair claim against a FIFO claim (fairness's own cost)`, baselineName: LABELS.drain.fifo, comparison: 'ratio', bound: FAIRNESS_SHARE, better: 'higher' },
        zip(rps('fifo'), rps('didyma')),
      ),
    );
  }
  return targets;
}

/** The floors of target 4's p50: 3 PostgreSQL round trips and 1 broker hop (publish → delivery), p50s of the run's (0). */
export const floorsMs = (floors: { postgres: { p50: number }; broker: { delivery: { p50: number } } }) => 3 * floors.postgres.p50 + floors.broker.delivery.p50;

/** Target 4 from the rounds of (4)'s latency, each against the direct runs around it (bench/lib/paired-latency.ts). */
export function latencyTargets(pairs: LatencyPair[], floors: Parameters<typeof floorsMs>[0]): TargetResult[] {
  const of = (p: 'p50' | 'p99') => pairs.map((pair) => ({ baseline: pair.direct[p], didyma: pair.endToEnd[p] }));
  return [
    judge({ id: '4', what: 'queued latency at half the sustained rate, p50 over direct, ms', baselineName: 'direct call', comparison: 'difference', bound: FLOOR_FACTOR * floorsMs(floors), better: 'lower' }, of('p50')),
    judge({ id: '4', what: 'queued latency at half the sustained rate, p99 over direct, ms', baselineName: 'direct call', comparison: 'difference', bound: P99_SLACK_MS, better: 'lower' }, of('p99')),
  ];
}

/** Target 6: the peak RSS (VmHWM) of each platform process, MiB. */
export function rssTargets(rssBytes: Record<string, number>, platformProcesses: string[]): TargetResult[] {
  const MiB = 1024 * 1024;
  return platformProcesses
    .filter((name) => rssBytes[name] !== undefined)
    .map((name) => judgeAbsolute({ id: '6', what: `peak RSS of ${name}, MiB`, baselineName: '', bound: RSS_BOUND / MiB, better: 'lower' }, rssBytes[name]! / MiB));
}

const n0 = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
const range = (values: number[]) => (values.length ? `${n0(median(values))} [${n0(Math.min(...values))}–${n0(Math.max(...values))}]` : 'n/a');
const failures = (runs: MeasuredRun[]) => {
  const bad = runs.flatMap((run) => Object.entries(run.statuses).filter(([code]) => !code.startsWith('2'))).reduce((sum, [, count]) => sum + count, 0);
  return bad ? ` (${bad} not 2xx)` : '';
};

/** The figures behind targets 1–3: each contender's medians over its rounds, [lowest–highest]. */
export function queuesTable(q: QueuesReport): string {
  const served = (label: string, runs: MeasuredRun[]) =>
    `| ${label} | ${range(runs.map((r) => r.rps))}${failures(runs)} | ${range(runs.map((r) => r.cpuUsPerRequest.server))} | ${range(runs.map((r) => r.cpuUsPerRequest.postgres))} | ${range(runs.map((r) => r.cpuUsPerRequest.rabbitmq))} | ${range(runs.map((r) => r.cpuUsPerRequest.load))} |`;
  const drained = (label: string, runs: DrainRun[]) =>
    `| ${label} | ${range(runs.map((r) => r.rps))}${runs.some((r) => r.ranDry) ? ' (a window ran dry)' : ''} | ${range(runs.map((r) => r.cpuUsPerInvocation.consumer))} | ${range(runs.map((r) => r.cpuUsPerInvocation.postgres))} | ${range(runs.map((r) => r.cpuUsPerInvocation.model))} | |`;
  return [
    `Queue comparison: ${q.rounds} interleaved rounds of ${q.durationSec} s, medians [lowest–highest]; CPU in µs per request (per invocation for drains)`,
    '',
    '| contender | req/s | server | PostgreSQL | RabbitMQ | load generator |',
    '|---|---|---|---|---|---|',
    ...(Object.keys(LABELS.enqueue) as EnqueueName[]).map((name) => served(LABELS.enqueue[name], q.enqueue[name])),
    ...(Object.keys(LABELS.read) as ReadName[]).map((name) => served(LABELS.read[name], q.read[name])),
    '',
    ...q.drains.flatMap((drain) => [
      `| drain, ${drain.model} (direct call p50 ${drain.directP50 < 1 ? '< 1' : n0(drain.directP50)} ms) | invocations/s | consumer | PostgreSQL | model server | |`,
      '|---|---|---|---|---|---|',
      ...(Object.keys(LABELS.drain) as DrainName[]).map((name) => drained(LABELS.drain[name], drain.runs[name])),
      '',
    ]),
  ].join('\n');
}
