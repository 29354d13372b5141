import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import YAML from 'yaml';

// A plain-HTTP proxy in front of the API server that counts each request of
// the one client it serves, by verb and resource (`WATCH configmaps`, `PATCH
// modeldeployments/status`), and the bytes the API server answered: the
// client's kubeconfig points at it, the proxy authenticates upstream as the
// test kubeconfig's user.

export interface RequestCounts {
  requests: Record<string, number>;
  /** Bytes of the answers, by the same keys (a watch's events included). */
  bytes: Record<string, number>;
}

export interface CountingProxy {
  /** A kubeconfig for the proxy (no credentials: the proxy holds them). */
  kubeconfig: string;
  counts(): RequestCounts;
  close(): Promise<void>;
}

/** `VERB resource[/subresource]`: LIST, GET and WATCH told apart as the API server's audit log does. */
export function requestKey(method: string, url: string): string {
  const { pathname, searchParams } = new URL(url, 'http://proxy');
  const parts = pathname.split('/').filter(Boolean);
  const at = parts.indexOf('namespaces');
  const rest = at >= 0 ? parts.slice(at + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  const resource = [rest[0], rest[2]].filter(Boolean).join('/') || pathname;
  const watch = ['true', '1'].includes(searchParams.get('watch') ?? '');
  const verb = method !== 'GET' ? method : watch ? 'WATCH' : rest.length >= 2 ? 'GET' : 'LIST';
  return `${verb} ${resource}`;
}

export async function countingProxy(kubeconfig: string, namespace: string, file: string): Promise<CountingProxy> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const target = new URL(kc.getCurrentCluster()!.server);
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const agent = new https.Agent({ ...(tls as https.AgentOptions), keepAlive: true });
  const counts: RequestCounts = { requests: {}, bytes: {} };
  const server = http.createServer((req, res) => {
    const key = requestKey(req.method ?? 'GET', req.url ?? '/');
    counts.requests[key] = (counts.requests[key] ?? 0) + 1;
    const upstream = https.request({ agent, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders(); // a watch's headers come before its first event, which may be minutes away
      answer.on('data', (chunk: Buffer) => (counts.bytes[key] = (counts.bytes[key] ?? 0) + chunk.length));
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    // A client ending a watch closes its side: end the upstream watch with it.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fs.writeFileSync(
    file,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node refuses plain HTTP unless TLS verification is off: there is no TLS to verify on loopback.
      clusters: [{ name: 'proxy', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'proxy', user: {} }],
      contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy', namespace } }],
      'current-context': 'proxy',
    }),
  );
  return {
    kubeconfig: file,
    counts: () => structuredClone(counts),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What `after` counted beyond `before`. */
export function countsSince(before: RequestCounts, after: RequestCounts): RequestCounts {
  const minus = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).flatMap(([key, value]) => (value - (b[key] ?? 0) ? [[key, value - (b[key] ?? 0)]] : [])));
  return { requests: minus(after.requests, before.requests), bytes: minus(after.bytes, before.bytes) };
}

export const total = (record: Record<string, number>) => Object.values(record).reduce((sum, value) => sum + value, 0);
