import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { HttpStatusError, HttpTransportError } from './errors.js';
import { HttpClient, type HttpClientOptions } from './http-client.js';
import { parseRetryAfter, retryDelay, DEFAULT_RETRY } from './retry.js';
import { UrlPolicy } from './url-policy.js';
import { startSilentServer } from '../../test/support/silent-server.js';
import { until } from '../../test/support/until.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, attempt: number) => void;

/** A real HTTP server on a free loopback port that records what it receives. */
async function startServer(handler: Handler) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      handler(req, res, seen.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections()));
  return { url, seen, close };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const fastRetry = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 2_000 };

describe('HttpClient', () => {
  const clients: HttpClient[] = [];
  const servers: Array<{ close: () => Promise<void> }> = [];
  const client = (options: Partial<HttpClientOptions> = {}) => {
    const created = new HttpClient({ policy: new UrlPolicy({ allowLoopback: true }), retry: fastRetry, ...options });
    clients.push(created);
    return created;
  };
  const server = async (handler: Handler) => {
    const started = await startServer(handler);
    servers.push(started);
    return started;
  };
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.close());
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('sends JSON and decodes the JSON answer', async () => {
    const s = await server((_req, res) => json(res, 200, { ok: true }));
    const answer = await client().request({ method: 'POST', url: `${s.url}/echo`, json: { a: 1 } });
    expect(answer.status).to.equal(200);
    expect(answer.body).to.deep.equal({ ok: true });
    expect(s.seen[0]?.body).to.equal('{"a":1}');
    expect(s.seen[0]?.headers['content-type']).to.equal('application/json');
    expect(s.seen[0]?.headers.accept).to.equal('application/json');
  });

  it('keeps a non-JSON answer as text and an empty one as null', async () => {
    const s = await server((req, res) => (req.url === '/text' ? res.end('OK') : res.end('\n')));
    expect((await client().request({ method: 'GET', url: `${s.url}/text` })).body).to.equal('OK');
    expect((await client().request({ method: 'GET', url: `${s.url}/empty` })).body).to.equal(null);
  });

  it('refuses a 2xx answer that claims JSON but is not', async () => {
    const s = await server((_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end('{"broken":')));
    const error = await client().request({ method: 'GET', url: s.url }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HttpTransportError);
    expect((error as HttpTransportError).failure).to.equal('invalid_response');
  });

  it('sends the bearer token, and keeps it out of error messages and logs', async () => {
    const token = 'tok_0123456789abcdef';
    // A careless server that echoes the credential back in its error page.
    const s = await server((req, res, attempt) => json(res, attempt < 3 ? 503 : 500, { error: `bad token ${req.headers.authorization}` }));
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const error = await client({ logger }).request({ method: 'GET', url: `${s.url}/secure`, token }).catch((e: unknown) => e);
    expect(s.seen.map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${token}`, `Bearer ${token}`, `Bearer ${token}`]);
    expect(error).to.be.instanceOf(HttpStatusError);
    expect((error as HttpStatusError).message).to.contain('answered HTTP 500: bad token Bearer [redacted]');
    expect(JSON.stringify(error)).not.to.contain(token);
    expect(lines).to.have.length(2);
    expect(lines.join('')).not.to.contain(token);
  });

  it('gives up on an answer that takes longer than the timeout, and hangs up', async () => {
    let hungUp: Promise<unknown> | undefined;
    const s = await server((_req, res) => void (hungUp = once(res, 'close')));
    const error = await client({ timeoutMs: 150, retry: { ...fastRetry, attempts: 1 } }).request({ method: 'GET', url: s.url }).catch((e: unknown) => e);
    // The server never answers: only the timeout can end the request, and the error says it did.
    expect(error).to.be.instanceOf(HttpTransportError);
    expect((error as HttpTransportError).failure).to.equal('timeout');
    expect((error as Error).message).to.match(/^GET http:\/\/127\.0\.0\.1:\d+\/ failed: no complete answer within 150 ms$/);
    // The client closed the request rather than leaving it open (when it reached the server at all).
    await hungUp;
  });

  it('retries a timed-out GET but not a timed-out POST, which the server may have run', async () => {
    const s = await server(() => undefined);
    // Attempts are counted where they are made: on a stalled machine an attempt can time out before
    // its connection is even open, and the server would never see it.
    const retries: string[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (retries.push(String(chunk)), done()) }));
    const get = await client({ timeoutMs: 100, logger }).request({ method: 'GET', url: s.url }).catch((e: unknown) => e);
    expect((get as HttpTransportError).failure).to.equal('timeout');
    expect(retries).to.have.length(2); // three attempts
    const post = await client({ timeoutMs: 100, logger }).request({ method: 'POST', url: s.url, json: {} }).catch((e: unknown) => e);
    expect((post as HttpTransportError).failure).to.equal('timeout');
    expect(retries).to.have.length(2); // one attempt, no retry
  });

  it('gives up on a peer that accepts the connection and never answers at the headers timeout, and closes its socket', async () => {
    const silent = await startSilentServer();
    try {
      const error = await client({ headersTimeoutMs: 200, timeoutMs: 10_000, retry: { ...fastRetry, attempts: 1 } })
        .request({ method: 'POST', url: `${silent.url}/v2/models/m/infer`, json: {} })
        .catch((e: unknown) => e);
      expect((error as HttpTransportError).failure).to.equal('timeout');
      // The headers timeout's own words: not the 10 s overall timeout.
      expect((error as Error).message).to.match(/failed: no answer within 200 ms of the request$/);
      await until(async () => (await silent.connections()) === 0, 'the socket to the silent peer to close', 2_000);
    } finally {
      await silent.close();
    }
  });

  it('cuts a request in flight when it closes, without retrying it', async () => {
    const silent = await startSilentServer();
    try {
      const http = client({ retry: { ...fastRetry, attempts: 5 } });
      const accepted = silent.accepted();
      const pending = http.request({ method: 'GET', url: silent.url }).catch((e: unknown) => e);
      await accepted;
      http.close();
      const error = await pending;
      expect((error as HttpTransportError).failure).to.equal('aborted');
      expect((error as Error).message).to.match(/was cancelled: the process is shutting down$/);
      await until(async () => (await silent.connections()) === 0, 'the socket to the silent peer to close', 2_000);
    } finally {
      await silent.close();
    }
  });

  it('ends the wait before a retry when it closes', async () => {
    const s = await server((_req, res) => json(res, 503, {}, { 'retry-after': '10' }));
    const http = client({ retry: { ...fastRetry, maxRetryAfterMs: 60_000 } });
    const pending = http.request({ method: 'GET', url: s.url }).catch((e: unknown) => e);
    await until(async () => s.seen.length === 1, 'the first attempt', 2_000);
    http.close();
    // Aborted, and no second attempt: the close ended the 10 s wait, not its end.
    expect(((await pending) as HttpTransportError).failure).to.equal('aborted');
    expect(s.seen).to.have.length(1);
  });

  it('counts name resolution in the connect timeout', async () => {
    const policy = new UrlPolicy({ resolve: () => new Promise(() => undefined) });
    const error = await client({ policy, connectTimeoutMs: 100, retry: { ...fastRetry, attempts: 1 } })
      .request({ method: 'GET', url: 'http://hangs.example.com/' })
      .catch((e: unknown) => e);
    expect((error as HttpTransportError).failure).to.equal('connect_timeout');
    expect((error as HttpTransportError).retryable).to.equal('always');
  });

  it('cuts off an answer larger than the limit, declared or streamed', async () => {
    const big = 'x'.repeat(4096);
    const s = await server((req, res) => {
      if (req.url === '/declared') return json(res, 200, { big });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"big":"${big}`);
      res.end('"}');
    });
    for (const path of ['/declared', '/streamed']) {
      const error = await client({ maxResponseBytes: 1024 }).request({ method: 'GET', url: `${s.url}${path}` }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(HttpTransportError);
      expect((error as HttpTransportError).failure).to.equal('too_large');
      expect((error as Error).message).to.contain('the answer is larger than 1024 bytes');
    }
    expect(s.seen).to.have.length(2);
  });

  it('retries 503 until it succeeds', async () => {
    const s = await server((_req, res, attempt) => (attempt < 3 ? json(res, 503, { error: 'busy' }) : json(res, 200, { done: true })));
    const answer = await client().request({ method: 'POST', url: s.url, json: {} });
    expect(answer.body).to.deep.equal({ done: true });
    expect(s.seen).to.have.length(3);
  });

  it('stops after the configured number of attempts', async () => {
    const s = await server((_req, res) => json(res, 503, { error: 'busy' }));
    const error = await client().request({ method: 'GET', url: s.url }).catch((e: unknown) => e);
    expect((error as HttpStatusError).upstreamStatus).to.equal(503);
    expect(s.seen).to.have.length(3);
  });

  it('surfaces a non-transient status at once, with the status and a short excerpt', async () => {
    const s = await server((req, res) => json(res, req.url === '/missing' ? 404 : 500, { error: 'model exploded '.repeat(100) }));
    const error = await client().request({ method: 'GET', url: `${s.url}/boom?secret=1` }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HttpStatusError);
    const status = error as HttpStatusError;
    expect(status.upstreamStatus).to.equal(500);
    expect(status.status).to.equal(502);
    expect(status.excerpt.length).to.be.at.most(303);
    expect(status.message).to.match(/^GET http:\/\/127\.0\.0\.1:\d+\/boom answered HTTP 500: model exploded/);
    await client().request({ method: 'GET', url: `${s.url}/missing` }).catch(() => undefined);
    expect(s.seen).to.have.length(2);
  });

  it('returns statuses the caller accepts instead of throwing', async () => {
    const s = await server((_req, res) => json(res, 404, { error: 'unknown model' }));
    const answer = await client().request({ method: 'GET', url: s.url, accept: [404] });
    expect(answer.status).to.equal(404);
    expect(answer.body).to.deep.equal({ error: 'unknown model' });
  });

  it('retries 502 and 504 for idempotent requests only', async () => {
    const s = await server((_req, res, attempt) => (attempt % 2 === 1 ? json(res, 502, {}) : json(res, 200, { ok: true })));
    expect((await client().request({ method: 'GET', url: s.url })).body).to.deep.equal({ ok: true });
    expect(s.seen).to.have.length(2);
    const error = await client().request({ method: 'POST', url: s.url, json: {} }).catch((e: unknown) => e);
    expect((error as HttpStatusError).upstreamStatus).to.equal(502);
    expect(s.seen).to.have.length(3);
    expect((await client().request({ method: 'POST', url: s.url, json: {}, idempotent: true })).body).to.deep.equal({ ok: true });
  });

  it('waits as long as Retry-After asks after a 429, and gives up when it asks too much', async () => {
    const s = await server((req, res, attempt) => {
      if (req.url === '/later') return json(res, 429, {}, { 'retry-after': '3600' });
      return attempt === 1 ? json(res, 429, {}, { 'retry-after': '1' }) : json(res, 200, { ok: true });
    });
    const retries: Array<{ delayMs: number }> = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (retries.push(JSON.parse(String(chunk))), done()) }));
    expect((await client({ logger }).request({ method: 'POST', url: s.url, json: {} })).body).to.deep.equal({ ok: true });
    // The wait the client chose, as it logs it, rather than the wall time it took.
    expect(retries.map((r) => r.delayMs)).to.deep.equal([1000]);
    const error = await client().request({ method: 'GET', url: `${s.url}/later` }).catch((e: unknown) => e);
    expect((error as HttpStatusError).retryAfterMs).to.equal(3_600_000);
    expect(s.seen).to.have.length(3);
  });

  it('retries a refused connection, then reports it', async () => {
    const s = await server(() => undefined);
    await s.close();
    const retries: string[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (retries.push(String(chunk)), done()) }));
    const error = await client({ logger }).request({ method: 'POST', url: s.url, json: {} }).catch((e: unknown) => e);
    expect(retries).to.have.length(2);
    expect(error).to.be.instanceOf(HttpTransportError);
    expect((error as HttpTransportError).failure).to.equal('connect');
    expect((error as Error).message).to.match(/failed: connection refused$/);
  });

  it('refuses a URL or a resolved address the policy denies, before sending anything', async () => {
    const s = await server((_req, res) => json(res, 200, {}));
    const port = new URL(s.url).port;
    const policy = new UrlPolicy({ resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const strict = client({ policy });
    const literal = await strict.request({ method: 'GET', url: s.url }).catch((e: unknown) => e);
    expect((literal as HttpTransportError).failure).to.equal('refused_by_policy');
    const rebound = await strict.request({ method: 'GET', url: `http://rebind.example.com:${port}/` }).catch((e: unknown) => e);
    expect((rebound as HttpTransportError).failure).to.equal('refused_by_policy');
    expect((rebound as Error).message).to.contain('it resolves to 127.0.0.1, which is a loopback address');
    const metadata = await client().request({ method: 'GET', url: 'http://169.254.169.254/latest/meta-data' }).catch((e: unknown) => e);
    expect((metadata as HttpTransportError).failure).to.equal('refused_by_policy');
    expect(s.seen).to.have.length(0);
  });

  it('connects to a name the policy allows, through the policy lookup', async () => {
    const s = await server((_req, res) => json(res, 200, { ok: true }));
    const port = new URL(s.url).port;
    const policy = new UrlPolicy({ allowLoopback: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const answer = await client({ policy }).request({ method: 'GET', url: `http://models.example.com:${port}/` });
    expect(answer.body).to.deep.equal({ ok: true });
    expect(s.seen[0]?.headers.host).to.equal(`models.example.com:${port}`);
  });

  it('stops when the caller cancels', async () => {
    const s = await server(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await client().request({ method: 'GET', url: s.url, signal: controller.signal }).catch((e: unknown) => e);
    expect((error as HttpTransportError).failure).to.equal('aborted');
  });
});

describe('retry policy', () => {
  const transient = new HttpStatusError('x', 503, '', 'always');

  it('backs off exponentially with jitter, up to the ceiling', () => {
    const settings = { ...DEFAULT_RETRY, attempts: 10 };
    expect(retryDelay(transient, 1, true, settings, () => 0)).to.equal(100);
    expect(retryDelay(transient, 1, true, settings, () => 1)).to.equal(200);
    expect(retryDelay(transient, 3, true, settings, () => 1)).to.equal(800);
    expect(retryDelay(transient, 9, true, settings, () => 1)).to.equal(5_000);
  });

  it('never retries past the attempt count or a non-transient error', () => {
    expect(retryDelay(transient, 3, true, DEFAULT_RETRY)).to.equal(null);
    expect(retryDelay(new HttpStatusError('x', 400, '', 'never'), 1, true, DEFAULT_RETRY)).to.equal(null);
    expect(retryDelay(new HttpTransportError('x', 'timeout', 'idempotent'), 1, false, DEFAULT_RETRY)).to.equal(null);
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(parseRetryAfter('7')).to.equal(7_000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).to.equal(6_000);
    expect(parseRetryAfter('soon')).to.equal(undefined);
  });
});
