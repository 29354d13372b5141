import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { AnswerReader } from './answer-reader.js';
import { pacedLoad } from './paced.js';

/** A local server whose handler the test chooses; every request it saw is kept. */
async function server(handler: http.RequestListener) {
  const seen: Array<{ method: string; url: string; body: string; headers: http.IncomingHttpHeaders }> = [];
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body: Buffer.concat(chunks).toString(), headers: req.headers });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, close: () => new Promise((r) => s.close(r)) };
}

/** `test` against a server with `handler`, closed afterwards whatever happens. */
async function withServer(handler: http.RequestListener, test: (s: Awaited<ReturnType<typeof server>>) => Promise<void>): Promise<void> {
  const s = await server(handler);
  try {
    await test(s);
  } finally {
    await s.close();
  }
}

const base = { method: 'GET' as const, headers: {}, connections: 4, overallRate: 200, durationSec: 0.25, timeoutMs: 2000 };

/** A clock that moves only when told to: a sleep moves it at once, and so may the test's server. */
function virtualClock() {
  const clock = {
    time: 0,
    sleeps: [] as number[],
    now: () => clock.time,
    async sleep(ms: number) {
      clock.sleeps.push(ms);
      clock.time += ms;
    },
  };
  return clock;
}

describe('bench: the paced load generator', () => {
  it('sends rate × duration requests, the body and headers as given, each path as often', async () => {
    await withServer((_req, res) => res.end('{"ok":true}'), async (s) => {
      const body = Buffer.from('{"x":1}');
      const run = await pacedLoad({ ...base, method: 'POST', url: s.url, body, headers: { 'content-type': 'application/json', authorization: 'Bearer t' }, paths: ['/a', '/b'] });
      expect(run.statuses).to.deep.equal({ '200': 50 });
      expect(run.latencies).to.have.length(50);
      expect(run.errors + run.timeouts).to.equal(0);
      // Four sockets: the server sees the requests in no set order.
      expect(s.seen.filter((r) => r.url === '/a')).to.have.length(25);
      expect(s.seen.filter((r) => r.url === '/b')).to.have.length(25);
      expect(s.seen.every((r) => r.method === 'POST' && r.body === '{"x":1}' && r.headers.authorization === 'Bearer t')).to.equal(true);
    });
  });

  it('paces the requests one every 1000/rate ms, paths in turn, and times the run on its clock', async () => {
    const clock = virtualClock();
    await withServer((_req, res) => res.end('ok'), async (s) => {
      const run = await pacedLoad({ ...base, url: s.url, paths: ['/a', '/b'], connections: 1, clock });
      expect(run.statuses).to.deep.equal({ '200': 50 });
      expect(s.seen.map((r) => r.url)).to.deep.equal(Array.from({ length: 50 }, (_, i) => (i % 2 ? '/b' : '/a')));
      expect(clock.sleeps, 'a wait of 5 ms before each request after the first').to.deep.equal(Array.from({ length: 49 }, () => 5));
      expect(run.seconds).to.equal(0.245);
    });
  });

  it('counts each status, chunked answers and answers that close the connection included', async () => {
    let n = 0;
    await withServer((_req, res) => {
      n += 1;
      if (n % 3 === 0) {
        res.writeHead(503, { connection: 'close', 'content-length': '2' }).end('no');
      } else if (n % 3 === 1) {
        res.writeHead(201); // no length: chunked
        res.write('a'.repeat(10));
        setImmediate(() => res.end('b'.repeat(20_000)));
      } else res.writeHead(204).end();
    }, async (s) => {
      const run = await pacedLoad({ ...base, url: s.url, overallRate: 120 });
      expect(run.statuses).to.deep.equal({ '201': 10, '204': 10, '503': 10 });
      expect(run.errors + run.timeouts).to.equal(0);
    });
  });

  it('counts a request that gets no answer in time as a timeout, and goes on', async () => {
    let n = 0;
    await withServer((_req, res) => {
      n += 1;
      if (n !== 2) res.end('ok');
    }, async (s) => {
      const run = await pacedLoad({ ...base, url: s.url, overallRate: 40, timeoutMs: 300 });
      expect(run.timeouts).to.equal(1);
      expect(run.statuses).to.deep.equal({ '200': 9 });
    });
  });

  it('counts a refused connection as an error', async () => {
    const s = await server((_req, res) => res.end());
    await s.close();
    const run = await pacedLoad({ ...base, url: s.url, overallRate: 40 });
    expect(run.errors).to.equal(10);
    expect(run.latencies).to.have.length(0);
  });

  it('queues requests for a free socket, their wait counted in their latency', async () => {
    const clock = virtualClock();
    await withServer((_req, res) => {
      clock.time += 50; // each answer takes 50 ms of the clock
      res.end('ok');
    }, async (s) => {
      const run = await pacedLoad({ ...base, url: s.url, connections: 1, overallRate: 100, durationSec: 0.1, clock });
      expect(run.statuses).to.deep.equal({ '200': 10 });
      // One socket, 50 ms per answer, one due every 10 ms (all sent by 90 ms): request k waits for the k before it.
      expect(run.latencies).to.deep.equal(Array.from({ length: 10 }, (_, k) => 140 + 40 * k));
    });
  });
});

describe('bench: reading an HTTP answer', () => {
  const bytes = (text: string) => Buffer.from(text, 'latin1');

  it('ends an answer at its content-length, across chunks', () => {
    const reader = new AnswerReader();
    expect(reader.read(bytes('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n'))).to.equal(undefined);
    expect(reader.read(bytes('\r\nhel'))).to.equal(undefined);
    expect(reader.read(bytes('lo'))).to.deep.equal({ status: '200', close: false });
  });

  it('ends a chunked answer at its last chunk, split anywhere', () => {
    const answer = 'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n';
    for (let cut = 1; cut < answer.length; cut++) {
      const reader = new AnswerReader();
      expect(reader.read(bytes(answer.slice(0, cut))), `cut at ${cut}`).to.equal(undefined);
      expect(reader.read(bytes(answer.slice(cut)))).to.deep.equal({ status: '201', close: true });
    }
  });

  it('refuses what is not an HTTP answer, or has no length', () => {
    expect(() => new AnswerReader().read(bytes('hello\r\n\r\n'))).to.throw(/not an HTTP answer/);
    expect(() => new AnswerReader().read(bytes('HTTP/1.1 200 OK\r\n\r\n'))).to.throw(/without a length/);
  });
});
