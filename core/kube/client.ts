import { setTimeout as sleep } from 'node:timers/promises';
import https from 'node:https';
import http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from './resources.js';
import { parseRetryAfter } from '../net/retry.js';

/** A failed call to the Kubernetes API: the HTTP status (0 when none came back) and the API's own reason. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export const isNotFound = (error: unknown) => error instanceof KubeApiError && error.status === 404;
export const isConflict = (error: unknown) => error instanceof KubeApiError && error.status === 409;

export type PatchType = 'apply' | 'merge' | 'json';

const WATCH_IDLE_MS = 10 * 60_000;

const CONTENT_TYPES: Record<PatchType, string> = {
  apply: 'application/apply-patch+yaml',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface Watching {
  /** Resolves when the server closes the stream; rejects on a transport error or an ERROR event (410 Gone included). */
  done: Promise<void>;
  stop(): void;
}

/**
 * A small JSON client for the Kubernetes REST API. Authentication, TLS and
 * token refresh come from @kubernetes/client-node's KubeConfig (kubeconfig
 * files, in-cluster service accounts, exec plugins); requests are plain paths
 * so server-side apply, subresources and JSON patches need no generated types.
 */
export class KubeClient {
  private readonly kc: Promise<KubeConfig>;

  constructor(
    /** A promise when the client library is still loading (see connection.ts). */
    kc: KubeConfig | Promise<KubeConfig>,
    private readonly timeoutMs: number,
    /** Throws when this process may not write (the operator when it is not the leader). */
    private readonly writeGuard?: () => void,
  ) {
    this.kc = Promise.resolve(kc);
  }

  /** The same client, refusing every write while `guard` throws. */
  fenced(guard: () => void): KubeClient {
    return new KubeClient(this.kc, this.timeoutMs, guard);
  }

  get<T = KubeObject>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  async list<T = KubeObject>(path: string, query: RequestOptions['query'] = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    let resourceVersion = '';
    let continueToken: string | undefined;
    do {
      const page = await this.request<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>('GET', path, { query: { ...query, limit: 500, continue: continueToken } });
      items.push(...page.items);
      resourceVersion = page.metadata.resourceVersion;
      continueToken = page.metadata.continue || undefined;
    } while (continueToken);
    return { items, resourceVersion };
  }

  create<T = KubeObject>(path: string, body: unknown, query: RequestOptions['query'] = {}): Promise<T> {
    return this.request<T>('POST', path, { body, query });
  }

  replace<T = KubeObject>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }

  /** Server-side apply (`apply`, with a field manager, forced: this manager owns what it sends), merge or JSON patch. */
  patch<T = KubeObject>(path: string, type: PatchType, body: unknown, query: RequestOptions['query'] = {}): Promise<T> {
    return this.request<T>('PATCH', path, { body, query, contentType: CONTENT_TYPES[type] });
  }

  /** Deletes; a missing object is not an error (deleting is idempotent). */
  async delete(path: string): Promise<void> {
    try {
      await this.request('DELETE', path);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * One call, again after a 429 (at most THROTTLED_ATTEMPTS in all, waiting as
   * long as its Retry-After asks, within 10 s): the API server answers 429 to
   * requests it did not run, when its priority and fairness queues are full or
   * a resource's storage is still initialising (a CRD just created, an API
   * server just started), and expects the client to come back.
   */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (method !== 'GET') this.writeGuard?.(); // again on a retry: leadership may have gone meanwhile
      const { res } = await this.send(method, path, options, this.timeoutMs);
      const text = await readAll(res);
      const status = res.statusCode ?? 0;
      if (status === 429 && attempt < THROTTLED_ATTEMPTS) {
        await sleep(retryAfterMs(res.headers['retry-after'], attempt));
        continue;
      }
      if (status >= 300) throw apiError(status, text, method, path);
      return (text ? JSON.parse(text) : {}) as T;
    }
  }

  /** A watch stream from `resourceVersion`; each event goes to `onEvent` in order. */
  async watch<T>(path: string, query: RequestOptions['query'], onEvent: (event: WatchEvent<T>) => void): Promise<Watching> {
    // The server ends a watch after its timeoutSeconds; a connection silent for much longer is dead.
    const { res, req } = await this.send('GET', path, { query: { ...query, watch: true, allowWatchBookmarks: true } }, WATCH_IDLE_MS);
    if ((res.statusCode ?? 0) >= 300) throw apiError(res.statusCode ?? 0, await readAll(res), 'WATCH', path);
    const done = new Promise<void>((resolve, reject) => {
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (!line) continue;
          let event: WatchEvent<T>;
          try {
            event = JSON.parse(line) as WatchEvent<T>;
          } catch {
            req.destroy();
            reject(new KubeApiError(0, 'BadWatchEvent', `unreadable watch event on ${path}`));
            return;
          }
          if (event.type === 'ERROR') {
            const status = event.object as { code?: number; reason?: string; message?: string };
            req.destroy();
            reject(new KubeApiError(status.code ?? 500, status.reason ?? 'WatchError', status.message ?? 'watch failed'));
            return;
          }
          onEvent(event);
        }
      });
      res.on('end', () => resolve());
      res.on('error', reject);
      req.on('error', reject);
    });
    return { done, stop: () => req.destroy() };
  }

  private async send(method: string, path: string, options: RequestOptions, timeoutMs: number) {
    const kc = await this.kc;
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new KubeApiError(0, 'NoCluster', 'The kubeconfig names no cluster server');
    // Keep any path prefix of the server URL (API proxies such as Rancher's serve clusters under one).
    const url = new URL(server.replace(/\/+$/, '') + path);
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const requestOptions: https.RequestOptions = { method, headers: { accept: 'application/json', 'user-agent': 'didyma' } };
    await kc.applyToHTTPSOptions(requestOptions);
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload !== undefined) {
      requestOptions.headers = { ...requestOptions.headers, 'content-type': options.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) };
    }
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise<{ res: http.IncomingMessage; req: http.ClientRequest }>((resolve, reject) => {
      const req = transport.request(url, requestOptions, (res) => resolve({ res, req }));
      if (timeoutMs > 0) {
        req.setTimeout(timeoutMs, () => req.destroy(new KubeApiError(0, 'Timeout', `${method} ${url.pathname} timed out after ${timeoutMs} ms`)));
      }
      req.on('error', (error) => reject(error instanceof KubeApiError ? error : new KubeApiError(0, 'Unreachable', `${method} ${url.pathname}: ${error.message}`)));
      req.end(payload);
    });
  }
}

const THROTTLED_ATTEMPTS = 5;
const MAX_RETRY_AFTER_MS = 10_000;

/** The wait before retrying a 429: its Retry-After (within 10 s), else 250 ms doubled per attempt. */
export function retryAfterMs(header: string | undefined, attempt: number): number {
  return Math.min(parseRetryAfter(header) ?? 250 * 2 ** (attempt - 1), MAX_RETRY_AFTER_MS);
}

function readAll(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function apiError(status: number, text: string, method: string, path: string): KubeApiError {
  let reason = 'Unknown';
  let message = text.slice(0, 500);
  try {
    const parsed = JSON.parse(text) as { reason?: string; message?: string };
    reason = parsed.reason ?? reason;
    message = parsed.message ?? message;
  } catch {
    // not a Status object: keep the text
  }
  return new KubeApiError(status, reason, `${method} ${path.split('?')[0]}: ${status} ${message}`);
}
