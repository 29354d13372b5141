import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

// Where the model server and the executor run. On a cluster they are separate
// pods, usually on separate nodes; on the bench's small machine the scheduler
// would otherwise put them on the same core in turns. Measured on 2 vCPUs, that
// alone made each MLServer call cost 1.3–1.8 ms of its CPU during the drain,
// against 1.2 ms at its maximum; with the two kept apart it cost 1.2 ms again
// (docs/decisions.md). Only these two are placed: the API servers, PostgreSQL,
// RabbitMQ and the load generator go wherever the scheduler puts them. They may
// still run on the model server's CPU, so the model server also runs at a
// higher weight there (nice -10, when the bench may raise a priority): as a pod
// that requests a whole core, it gets that core first, and the others get what
// it leaves.

const MODEL_NICE = -10;

export type PlacementMode = 'split' | 'shared';

export interface Placement {
  mode: PlacementMode;
  /** CPU list (taskset syntax) of the model server, and of the executor; empty when shared. */
  modelCpus: string;
  executorCpus: string;
  /** The model server's nice value (0 when shared; absent in results from before it was set). */
  modelNice?: number;
}

export function placementMode(value: string): PlacementMode {
  if (value === 'split' || value === 'shared') return value;
  throw new Error(`BENCH_PLACEMENT=${value}: expected split (the default) or shared`);
}

/**
 * split: the last CPU for the model server, the others for the executor. With
 * a single CPU, or without taskset, there is nothing to split: shared. Only
 * root raises the model server's priority (a negative nice); others leave it.
 */
export function planPlacement(mode: PlacementMode, cpuCount: number, hasTaskset = tasksetAvailable(), isRoot = process.getuid?.() === 0): Placement {
  if (mode === 'shared' || cpuCount < 2 || !hasTaskset) return { mode: 'shared', modelCpus: '', executorCpus: '', modelNice: 0 };
  const last = cpuCount - 1;
  return { mode: 'split', modelCpus: String(last), executorCpus: last === 1 ? '0' : `0-${last - 1}`, modelNice: isRoot ? MODEL_NICE : 0 };
}

/** Binds every thread of process `pid` (threads it starts later inherit it) to `cpus`; nothing when `cpus` is empty. */
export function pin(pid: number | undefined, cpus: string): void {
  if (!pid || !cpus) return;
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * Sets the nice value of every thread of process `pid` (threads it starts
 * later inherit it), and of its scheduling autogroup when it has one of its
 * own; nothing for 0. With autogroups on (Linux's default for desktops and
 * this VM), the kernel first shares a CPU among sessions, and a thread's nice
 * only counts inside its own: the model server runs in a session of its own,
 * so only the autogroup's nice lifts it above the others. A failure throws:
 * the footer says the model server ran at that nice value.
 */
export function prioritize(pid: number | undefined, nice = 0): void {
  if (!pid || nice === 0) return;
  execFileSync('renice', ['-n', String(nice), '-p', ...fs.readdirSync(`/proc/${pid}/task`)], { stdio: 'ignore' });
  const group = autogroupOf(pid);
  // Never the bench's own group: that would lift the bench and every process it started with it
  // (the demo model server is one of them, so only its threads' nice is set).
  if (group && group !== autogroupOf(process.pid)) fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
}

/** The autogroup of process `pid` ("/autogroup-12"), or undefined where the kernel has none. */
export function autogroupOf(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8').split(' ')[0];
  } catch {
    return undefined;
  }
}

function tasksetAvailable(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
