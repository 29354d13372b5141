import type { InvocationView } from './threads.js';

/** How long an invocation waited for an executor and how long it ran, in milliseconds; absent until both ends are known. */
export interface Latency {
  wait?: number;
  run?: number;
}

type Times = Pick<InvocationView, 'created_at' | 'started_at' | 'completed_at'>;

/** The queue wait (created → started) and the run time (started → completed) of an invocation. */
export function latencyOf(invocation: Times): Latency {
  return { wait: between(invocation.created_at, invocation.started_at), run: between(invocation.started_at, invocation.completed_at) };
}

/** Milliseconds from one ISO time to a later one; undefined when either is missing or unreadable, or time runs backwards. */
function between(from: string | null, to: string | null): number | undefined {
  if (!from || !to) return undefined;
  const span = Date.parse(to) - Date.parse(from);
  return Number.isFinite(span) && span >= 0 ? span : undefined;
}

/** "340 ms", "2.5 s", "3 min 20 s", "1 h 5 min"; a dash when unknown. Each unit is rounded before it is split, so 59.97 s reads "1 min 0 s". */
export function durationText(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  const minutes = Math.round(ms / 60_000);
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
