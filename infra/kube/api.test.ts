import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { KubeApi, connect, retryAfterMs } from './api.js';
import { statusOf } from './errors.js';

/** An API server that answers each request with the next of `answers` (status, Retry-After; 0 never answers), then 200. */
async function fakeApiServer(answers: Array<[number, string?]>) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const [status, retryAfter] = answers.shift() ?? [200];
    if (status === 0) return;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    const body = status === 200 ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } : { kind: 'Status', reason: 'TooManyRequests', message: 'storage is (re)initializing' };
    res.writeHead(status, headers).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const api = (timeoutMs = 5000) =>
    connect((kc) => kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' }), timeoutMs);
  const close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return { api, seen, close };
}

const read = (api: KubeApi) => api.core.readNamespacedConfigMap({ name: 'a', namespace: 'x' });

describe('Kubernetes API transport', () => {
  for (const [what, answers, status, calls] of [
    ['comes back after a 429 as its Retry-After asks, and gets the answer', [[429, '0'], [429, '0']], undefined, 3],
    ['gives up after five attempts with the API server’s answer', Array.from({ length: 10 }, () => [429, '0']), 429, 5],
    ['does not retry other errors', [[500]], 500, 1],
  ] as Array<[string, Array<[number, string?]>, number | undefined, number]>) {
    it(what, async () => {
      const server = await fakeApiServer(answers);
      try {
        const outcome = await read(server.api()).catch((error: unknown) => error);
        if (status === undefined) expect(outcome).to.deep.include({ metadata: { name: 'a' } });
        else expect([statusOf(outcome), (outcome as Error).message.includes('storage is (re)initializing')]).to.deep.equal([status, true]);
        expect(server.seen).to.have.length(calls);
      } finally {
        await server.close();
      }
    });
  }

  it('checks the write guard again before each retried write (leadership may have gone)', async () => {
    const server = await fakeApiServer([[429, '0']]);
    let checks = 0;
    // Leader for the first attempt only: lost while the 429 is answered.
    const api = server.api().fenced(() => {
      if (++checks > 1) throw new Error('not the leader');
    });
    try {
      const error = await api.core.createNamespacedConfigMap({ namespace: 'x', body: { metadata: { name: 'a' } } }).catch((e: unknown) => e);
      expect((error as Error).message).to.equal('not the leader');
      expect(server.seen).to.deep.equal(['POST /api/v1/namespaces/x/configmaps']);
    } finally {
      await server.close();
    }
  });

  it('gives up on a call unanswered within the timeout', async () => {
    const server = await fakeApiServer([[0]]);
    try {
      const error = await read(server.api(200)).catch((e: unknown) => e);
      expect((error as Error).message).to.equal('GET /api/v1/namespaces/x/configmaps/a timed out after 200 ms');
    } finally {
      await server.close();
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

  it('caches what an informer lists and watches without managedFields', async () => {
    const object = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'x', resourceVersion: '2', managedFields: [{ manager: 'didyma-api', operation: 'Apply' }] }, data: { k: 'v' } });
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.includes('watch=true')) res.end(`${JSON.stringify({ type: 'ADDED', object: object('watched') })}\n`);
      else res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [object('listed')] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const api = connect((kc) => kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' }), 5000);
    const informer = api.informer('/api/v1/namespaces/x/configmaps', () => api.core.listNamespacedConfigMap({ namespace: 'x' }));
    const added = new Promise<void>((resolve) => informer.on('add', (o) => o.metadata?.name === 'watched' && resolve()));
    informer.on('error', () => undefined); // the fake ends each watch at once
    try {
      await informer.start();
      await added;
      expect(informer.list().map((o) => [o.metadata?.name, o.metadata?.managedFields, o.data])).to.deep.equal([
        ['listed', undefined, { k: 'v' }],
        ['watched', undefined, { k: 'v' }],
      ]);
    } finally {
      await informer.stop();
      await new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
    }
  });
});
