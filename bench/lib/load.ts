import autocannon from 'autocannon';
import { pacedLoad } from './paced.js';

export interface LoadResult {
  /** Mean requests per second over the measured window. */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** Responses by status code. */
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Paths taken in turn, one per request (many sessions, many invocations). */
  paths?: string[];
  /** Paths with headers of their own, taken in turn (many workspaces, each with its token); at saturation only. */
  requests?: Array<{ path: string; headers: Record<string, string> }>;
  /** Requests in all, instead of `durationSec` (a fixed backlog); at saturation only. */
  amount?: number;
  connections: number;
  durationSec: number;
  /** Requests per second over all connections; absent: as fast as the server answers. */
  overallRate?: number;
  /** Per-request timeout, seconds. */
  timeoutSec?: number;
}

/**
 * One load run; latencies in milliseconds. As fast as the server answers:
 * autocannon. At a given rate: `paced`, since autocannon spends each
 * connection's per-second allowance at the start of every second (bursts),
 * and its latency correction then assumes a request every millisecond.
 */
export async function load(options: LoadOptions): Promise<LoadResult> {
  if (options.overallRate) return paced({ ...options, overallRate: options.overallRate });
  let next = 0;
  const own = options.requests;
  const paths = options.paths ?? own?.map((request) => request.path);
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.durationSec,
    ...(options.amount ? { amount: options.amount } : {}),
    overallRate: options.overallRate,
    timeout: options.timeoutSec ?? 10,
    requests: paths?.length
      ? [
          {
            setupRequest: (request) => {
              const i = next++ % paths.length;
              request.path = paths[i]!;
              if (own) request.headers = { ...request.headers, ...own[i]!.headers };
              return request;
            },
          },
        ]
      : undefined,
  });
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stat as { count: number }).count;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** The median of unsorted values (the lower middle one of an even count); NaN when there are none. */
export const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/**
 * Open-loop load at an even rate: one request every 1000/rate ms over at most
 * `connections` keep-alive sockets, whatever the answers. A request's latency
 * runs from when it was due, so time spent waiting for a free socket counts.
 */
async function paced(options: LoadOptions & { overallRate: number }): Promise<LoadResult> {
  const run = await pacedLoad({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    body: options.body === undefined ? undefined : Buffer.from(options.body),
    paths: options.paths,
    connections: options.connections,
    overallRate: options.overallRate,
    durationSec: options.durationSec,
    timeoutMs: (options.timeoutSec ?? 10) * 1000,
  });
  const latencies = run.latencies.sort((a, b) => a - b);
  const { statuses, errors, timeouts } = run;
  return { rps: latencies.length / run.seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), requests: latencies.length, statuses, errors, timeouts };
}

/** The figures of one load run, as load() returns them; with the serving process's CPU per request where it was measured. */
export type Brief = LoadResult & { cpuUsPerRequest?: number };
