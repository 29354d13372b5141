import http from 'node:http';

export interface Reply<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  form?: Record<string, string>;
  multipart?: FormData;
  headers?: Record<string, string>;
  rawBody?: string | Buffer;
}

/** A tiny HTTP client over fetch for black-box API tests. */
export class Client {
  constructor(readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: RequestInit['body'];
    if (options.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.multipart) {
      body = options.multipart;
    } else if (options.rawBody !== undefined) {
      body = options.rawBody as RequestInit['body'];
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    // An event stream never ends: its status and headers are the answer; the body is for a streaming client.
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      await response.body?.cancel();
      return replyOf<T>(response.status, '', response.headers);
    }
    return replyOf<T>(response.status, await response.text(), response.headers);
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, options?: RequestOptions) => this.request<T>('POST', path, options);
  put = <T = any>(path: string, options?: RequestOptions) => this.request<T>('PUT', path, options);
  patch = <T = any>(path: string, options?: RequestOptions) => this.request<T>('PATCH', path, options);
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);
}

/**
 * GET a path exactly as written, as `curl --path-as-is` does. fetch (like every
 * WHATWG client) removes dot segments such as `..` and `%2E` before sending;
 * a hostile client need not, and the servers must answer those too.
 */
export function getAsIs(baseUrl: string, path: string, token?: string): Promise<Reply> {
  const target = new URL(baseUrl);
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  return new Promise((resolve, reject) => {
    const request = http.get({ host: target.hostname, port: target.port, path, headers }, (response) => {
      const replyHeaders = new Headers(Object.entries(response.headers).map(([k, v]) => [k, String(v)]));
      if (replyHeaders.get('content-type')?.startsWith('text/event-stream')) {
        response.destroy();
        return resolve(replyOf(response.statusCode ?? 0, '', replyHeaders));
      }
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        resolve(replyOf(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), replyHeaders));
      });
    });
    request.on('error', reject);
  });
}

/** The body parsed when the answer says it is JSON, the text otherwise. */
function replyOf<T = any>(status: number, text: string, headers: Headers): Reply<T> {
  // `application/json` or `…+json`; not JSON Lines (`application/x-ndjson`), which is read as text.
  const json = /[/+]json\b/.test(headers.get('content-type') ?? '') && text;
  return { status, body: (json ? JSON.parse(text) : text) as T, text, headers };
}
