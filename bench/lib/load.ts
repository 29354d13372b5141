import autocannon from 'autocannon';

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
  connections: number;
  durationSec: number;
  /** Requests per second over all connections; absent: as fast as the server answers. */
  overallRate?: number;
  /** Per-request timeout, seconds. */
  timeoutSec?: number;
}

/** One autocannon run; latencies in milliseconds. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  let next = 0;
  const paths = options.paths;
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.durationSec,
    overallRate: options.overallRate,
    timeout: options.timeoutSec ?? 10,
    requests: paths?.length
      ? [
          {
            setupRequest: (request) => {
              request.path = paths[next++ % paths.length]!;
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
