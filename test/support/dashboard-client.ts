/** A cookie-keeping HTTP client for the dashboard's server-rendered pages (tests without a browser). */
export interface PageReply {
  status: number;
  text: string;
  headers: Headers;
  location: string | null;
  setCookies: string[];
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  async get(path: string): Promise<PageReply> {
    return this.send('GET', path);
  }

  /** Posts a form; `_csrf` is taken from `page` (a previous reply) unless given. */
  async post(path: string, form: Record<string, string>, page?: PageReply): Promise<PageReply> {
    const fields = { ...(page ? { _csrf: csrfOf(page.text) } : {}), ...form };
    return this.send('POST', path, new URLSearchParams(fields).toString());
  }

  /** Posts a multipart form (a file upload); `_csrf` is taken from `page`. */
  async postMultipart(path: string, form: FormData, page: PageReply): Promise<PageReply> {
    form.set('_csrf', csrfOf(page.text));
    return this.send('POST', path, form);
  }

  async signIn(email: string, password: string, workspace = ''): Promise<PageReply> {
    const page = await this.get('/dashboard/sign-in');
    const reply = await this.post('/dashboard/sign-in', { email, password, workspace }, page);
    if (reply.status !== 303) throw new Error(`sign-in failed: ${reply.status} ${reply.text.slice(0, 500)}`);
    return reply;
  }

  private async send(method: string, path: string, body?: string | FormData): Promise<PageReply> {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
    // A FormData body sets its own multipart content type, with its boundary.
    if (typeof body === 'string') headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    const setCookies = response.headers.getSetCookie();
    for (const cookie of setCookies) this.keep(cookie);
    return { status: response.status, text: await response.text(), headers: response.headers, location: response.headers.get('location'), setCookies };
  }

  private keep(setCookie: string): void {
    const [pair] = setCookie.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq);
    const value = pair!.slice(eq + 1);
    if (/Max-Age=0/i.test(setCookie)) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1]!;
}
