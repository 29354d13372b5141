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
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, options?: RequestOptions) => this.request<T>('POST', path, options);
  put = <T = any>(path: string, options?: RequestOptions) => this.request<T>('PUT', path, options);
  patch = <T = any>(path: string, options?: RequestOptions) => this.request<T>('PATCH', path, options);
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);
}
