import { setMaxListeners } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as wait } from 'node:timers/promises';
import type { Logger } from 'pino';
import { HttpStatusError, HttpTransportError, isHttpClientError } from './errors.js';
import { excerptOf } from './excerpt.js';
import { exchange, type RawResponse } from './http-exchange.js';
import { Outbound } from './outbound.js';
import { DEFAULT_RETRY, parseRetryAfter, retryableStatus, retryDelay, type RetrySettings } from './retry.js';
import type { UrlPolicy } from './url-policy.js';

export interface HttpClientOptions {
  /** Every URL and every address a name resolves to is checked against it. */
  policy: UrlPolicy;
  /** DNS, TCP and TLS connect, per attempt. Default 5 s. */
  connectTimeoutMs?: number;
  /** From the request sent to the answer's headers, per attempt. Default: the whole attempt's timeout. */
  headersTimeoutMs?: number;
  /** One whole attempt, the answer's body included. Default 30 s. */
  timeoutMs?: number;
  /** Larger answers are cut off with an error. Default 10 MiB. */
  maxResponseBytes?: number;
  retry?: Partial<RetrySettings>;
  logger?: Logger;
  /** Source of the backoff jitter, replaceable for deterministic tests. */
  random?: () => number;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  url: string | URL;
  /** Sent as the JSON body. */
  json?: unknown;
  /** Sent as `Authorization: Bearer …`; never logged, and removed from error excerpts. */
  token?: string;
  headers?: Record<string, string>;
  /** Non-2xx statuses that are an answer rather than a failure (e.g. 404 for "unknown model"). */
  accept?: readonly number[];
  /** Whether repeating the request is harmless. Default: false for POST, true otherwise. */
  idempotent?: boolean;
  /** Overrides the client's per-attempt timeout (and its headers timeout when that is not set). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The parsed JSON; the text itself when the answer is not JSON; null when empty. */
  body: unknown;
  text: string;
}

/**
 * The platform's JSON client for calls to registries and model servers, over
 * node:http so that the URL policy's lookup runs on every connection.
 * Transient failures are retried with backoff; anything else surfaces at once
 * as an HttpStatusError or HttpTransportError.
 */
export class HttpClient {
  private readonly outbound: Outbound;
  private readonly retry: RetrySettings;
  /** Aborted by `close`: ends the waits between attempts (the outbound's close cuts the requests themselves). */
  private readonly closing = new AbortController();

  constructor(private readonly options: HttpClientOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    // Every backoff of every concurrent request listens to it: not a leak.
    setMaxListeners(0, this.closing.signal);
    const totalMs = options.timeoutMs ?? 30_000;
    this.outbound = new Outbound({
      deadlines: { connectMs: options.connectTimeoutMs ?? 5_000, headersMs: options.headersTimeoutMs ?? totalMs, totalMs },
      lookupFor: (port) => options.policy.lookupFor(port),
    });
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    const url = await this.target(request);
    const idempotent = request.idempotent ?? request.method !== 'POST';
    const label = `${request.method} ${url.origin}${url.pathname}`;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.attempt(request, url, label);
      } catch (error) {
        if (!isHttpClientError(error)) throw error;
        const delay = retryDelay(error, attempt, idempotent, this.retry, this.options.random);
        if (delay === null) throw error;
        this.options.logger?.warn({ request: label, attempt, delayMs: delay, reason: error.message }, 'outbound request failed, retrying');
        await pause(delay, label, request.signal ? AbortSignal.any([request.signal, this.closing.signal]) : this.closing.signal);
      }
    }
  }

  /** Cuts the requests still open and the idle keep-alive connections; call when the process stops. */
  close(): void {
    this.closing.abort();
    this.outbound.close();
  }

  private async target(request: HttpRequest): Promise<URL> {
    const url = request.url instanceof URL ? request.url : new URL(request.url);
    const denial = await this.options.policy.refusalOf(url);
    if (denial) throw new HttpTransportError(`${request.method} ${url.origin}${url.pathname} was refused by the outbound URL policy: ${denial}`, 'refused_by_policy', 'never');
    return url;
  }

  private async attempt(request: HttpRequest, url: URL, label: string): Promise<HttpResponse> {
    const body = request.json === undefined ? undefined : Buffer.from(JSON.stringify(request.json));
    const raw = await exchange({
      method: request.method,
      url,
      headers: headersOf(request, body),
      body,
      outbound: this.outbound,
      deadlines: request.timeoutMs === undefined ? undefined : { totalMs: request.timeoutMs, headersMs: Math.min(request.timeoutMs, this.options.headersTimeoutMs ?? request.timeoutMs) },
      maxResponseBytes: this.options.maxResponseBytes ?? 10 * 1024 * 1024,
      signal: request.signal,
      label,
    });
    const accepted = (raw.status >= 200 && raw.status < 300) || (request.accept ?? []).includes(raw.status);
    if (!accepted) throw statusError(raw, label, request.token);
    return decode(raw, label, raw.status < 300);
  }
}

function headersOf(request: HttpRequest, body: Buffer | undefined): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'didyma', ...request.headers };
  if (body) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(body.length);
  }
  if (request.token) headers.authorization = `Bearer ${request.token}`;
  return headers;
}

/** A 2xx answer that claims JSON must be JSON; other answers are kept as text when they are not. */
function decode(raw: RawResponse, label: string, strict: boolean): HttpResponse {
  const text = raw.body.toString('utf8');
  const base = { status: raw.status, headers: raw.headers, text };
  if (text.trim() === '') return { ...base, body: null };
  try {
    return { ...base, body: JSON.parse(text) };
  } catch {
    if (strict && /json/i.test(raw.headers['content-type'] ?? '')) {
      throw new HttpTransportError(`${label} failed: the answer is not valid JSON`, 'invalid_response', 'never');
    }
    return { ...base, body: text };
  }
}

function statusError(raw: RawResponse, label: string, token: string | undefined): HttpStatusError {
  const excerpt = excerptOf(raw.body.toString('utf8'), token);
  const retryAfterMs = parseRetryAfter(raw.headers['retry-after']);
  return new HttpStatusError(`${label} answered HTTP ${raw.status}${excerpt ? `: ${excerpt}` : ''}`, raw.status, excerpt, retryableStatus(raw.status), retryAfterMs);
}

async function pause(ms: number, label: string, signal: AbortSignal | undefined): Promise<void> {
  try {
    await wait(ms, undefined, { signal });
  } catch {
    throw new HttpTransportError(`${label} was cancelled`, 'aborted', 'never');
  }
}
