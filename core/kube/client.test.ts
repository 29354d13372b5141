import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeClient, retryAfterMs } from './client.js';

/** An API server that answers each request with the next of `answers` (status, Retry-After), then 200. */
async function fakeApiServer(answers: Array<[number, string?]>) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const [status, retryAfter] = answers.shift() ?? [200];
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    const body = status === 200 ? { kind: 'Thing', metadata: { name: 'a' } } : { kind: 'Status', reason: 'TooManyRequests', message: 'storage is (re)initializing' };
    res.writeHead(status, headers).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return { kc, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('Kubernetes client: throttled requests', () => {
  it('comes back after a 429 as its Retry-After asks, and gets the answer', async () => {
    const api = await fakeApiServer([[429, '0'], [429, '0']]);
    try {
      const thing = await new KubeClient(api.kc, 5000).get<{ metadata: { name: string } }>('/apis/x/v1/things/a');
      expect(thing.metadata.name).to.equal('a');
      expect(api.seen).to.have.length(3);
    } finally {
      await api.close();
    }
  });

  it('gives up after five attempts with the API server’s reason', async () => {
    const api = await fakeApiServer(Array.from({ length: 10 }, () => [429, '0'] as [number, string]));
    try {
      const error = await new KubeClient(api.kc, 5000).get('/apis/x/v1/things/a').catch((e: unknown) => e);
      expect(error).to.be.instanceOf(KubeApiError);
      expect((error as KubeApiError).status).to.equal(429);
      expect((error as KubeApiError).message).to.contain('storage is (re)initializing');
      expect(api.seen).to.have.length(5);
    } finally {
      await api.close();
    }
  });

  it('does not retry other errors', async () => {
    const api = await fakeApiServer([[500]]);
    try {
      const error = await new KubeClient(api.kc, 5000).get('/apis/x/v1/things/a').catch((e: unknown) => e);
      expect((error as KubeApiError).status).to.equal(500);
      expect(api.seen).to.have.length(1);
    } finally {
      await api.close();
    }
  });

  it('checks the write guard again before each retried write (leadership may have gone)', async () => {
    const api = await fakeApiServer([[429, '0']]);
    let leader = true;
    const client = new KubeClient(api.kc, 5000).fenced(() => {
      if (!leader) throw new Error('not the leader');
    });
    try {
      const writing = client.create('/apis/x/v1/things', { metadata: { name: 'a' } });
      leader = false; // lost while the 429 is answered
      const error = await writing.catch((e: unknown) => e);
      expect((error as Error).message).to.equal('not the leader');
      expect(api.seen).to.deep.equal(['POST /apis/x/v1/things']);
    } finally {
      await api.close();
    }
  });

  it('waits as long as Retry-After says, within 10 s, else backs off from 250 ms', () => {
    expect(retryAfterMs('1', 1)).to.equal(1000);
    expect(retryAfterMs('0', 3)).to.equal(0);
    expect(retryAfterMs('120', 1)).to.equal(10_000);
    expect(retryAfterMs(undefined, 1)).to.equal(250);
    expect(retryAfterMs('soon', 3)).to.equal(1000);
    expect(retryAfterMs('', 2)).to.equal(500);
    expect(retryAfterMs(undefined, 10)).to.equal(10_000);
  });
});
