import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Prometheus's query API that answers every range query with
 * one smooth, deterministic series per query (shaped by the query text), for
 * tests of what is drawn from metrics rather than of Prometheus itself.
 */
export async function startPrometheusStub(): Promise<{ url: string; queries: string[]; close(): Promise<void> }> {
  const queries: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const query = url.searchParams.get('query') ?? '';
    queries.push(query);
    const workspace = /workspace="([^"]+)"/.exec(query)?.[1] ?? '';
    res.setHeader('content-type', 'application/json');
    if (url.pathname !== '/api/v1/query_range') {
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }));
      return;
    }
    const [start, end, step] = ['start', 'end', 'step'].map((name) => Number(url.searchParams.get(name)));
    const seed = [...query].reduce((sum, char) => sum + char.charCodeAt(0), 0) % 7;
    const values: Array<[number, string]> = [];
    for (let t = start!; t <= end!; t += step!) {
      const phase = (t - start!) / Math.max(end! - start!, 1);
      values.push([t, (3 + seed + 2 * Math.sin(phase * Math.PI * (2 + seed / 3)) + phase * seed).toFixed(2)]);
    }
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric: { workspace }, values }] } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    queries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
