import type { Logger } from 'pino';
import { BadGatewayError } from '../../kernel/errors/errors.js';
import { HttpClient } from '../../infra/net/http-client.js';
import { isHttpClientError } from '../../infra/net/errors.js';
import { UrlPolicy } from '../../infra/net/url-policy.js';
import type { TimeRange } from './params.js';

/** The `data` of a Prometheus query answer. */
export interface QueryData {
  resultType: string;
  result: unknown[];
}

export interface PrometheusOptions {
  /** Base URL, without the trailing slash; may carry a path prefix. */
  url: string;
  /** One query, the answer read to its end. */
  timeoutMs: number;
  connectTimeoutMs?: number;
  maxResponseBytes: number;
  logger?: Logger;
}

interface ApiAnswer {
  status?: string;
  data?: QueryData;
  errorType?: string;
  error?: string;
}

/**
 * Runs PromQL through Prometheus's HTTP API. Every failure (unreachable, an
 * error answer, a malformed one) is a 502 whose message says the metrics
 * backend failed; the details go to the log, not to the caller.
 */
export class PrometheusClient {
  constructor(
    private readonly http: HttpClient,
    private readonly options: PrometheusOptions,
  ) {}

  /** The latest value of every series (`/api/v1/query` without `time`). */
  instant(query: string): Promise<QueryData> {
    return this.call('/api/v1/query', { query });
  }

  /** Values from start to end every step (`/api/v1/query_range`). */
  range(query: string, range: TimeRange): Promise<QueryData> {
    return this.call('/api/v1/query_range', { query, start: String(range.start), end: String(range.end), step: String(range.step) });
  }

  close(): void {
    this.http.close();
  }

  private async call(path: string, params: Record<string, string>): Promise<QueryData> {
    const url = new URL(this.options.url + path);
    // Prometheus stops evaluating at its own timeout; ours covers the network too.
    for (const [name, value] of Object.entries({ ...params, timeout: `${Math.max(1, Math.floor(this.options.timeoutMs / 1000))}s` })) url.searchParams.set(name, value);
    let answer: ApiAnswer;
    try {
      const response = await this.http.request({ method: 'GET', url, accept: [400, 422, 503] });
      answer = (response.body ?? {}) as ApiAnswer;
    } catch (error) {
      if (!isHttpClientError(error)) throw error;
      this.options.logger?.warn({ err: error }, 'Prometheus query failed');
      throw new BadGatewayError('The metrics backend (Prometheus) is unreachable or failing; retry later.');
    }
    return dataOf(answer, this.options.logger);
  }
}

function dataOf(answer: ApiAnswer, logger: Logger | undefined): QueryData {
  if (answer.status === 'success' && answer.data && typeof answer.data.resultType === 'string' && Array.isArray(answer.data.result)) return answer.data;
  logger?.warn({ errorType: answer.errorType, error: answer.error }, 'Prometheus refused the query');
  const reason = answer.status === 'error' ? `${answer.errorType ?? 'error'}: ${answer.error ?? 'no reason given'}` : 'unexpected answer';
  throw new BadGatewayError(`The metrics backend (Prometheus) could not run the query (${reason.slice(0, 300)}).`);
}

/**
 * A client for the Prometheus the operator configured. The URL comes from the
 * platform's configuration, never from a request, so its host is allowed even
 * on loopback or a private network, and nothing else is.
 */
export function createPrometheusClient(options: PrometheusOptions): PrometheusClient {
  const url = new URL(options.url);
  // The outbound policy refuses URLs with credentials: say so at start-up rather than at the first query.
  if (url.username || url.password) throw new Error('PROMETHEUS_URL must not contain credentials.');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const policy = new UrlPolicy({ allowLoopback: true, privateAllow: ['0.0.0.0/0', '::/0'], allow: [host] });
  const http = new HttpClient({ policy, connectTimeoutMs: options.connectTimeoutMs, timeoutMs: options.timeoutMs, maxResponseBytes: options.maxResponseBytes, retry: { attempts: 2 }, logger: options.logger });
  return new PrometheusClient(http, options);
}
