import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { metricsHandler, type MetricsPart } from '../infra/http/metrics-exposition.js';

export interface OperatorServerOptions {
  host: string;
  port: number;
  logger: Logger;
  metrics: MetricsPart[];
  metricsToken?: string;
  /** Rejects with the reason when the operator cannot do its work (Kubernetes API unreachable). */
  ready: () => Promise<void>;
}

/** `/healthz` (the process answers), `/readyz` (it can reach the Kubernetes API) and `/metrics`. */
export async function startOperatorServer(options: OperatorServerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const metrics = metricsHandler(options.metrics, { token: options.metricsToken, logger: options.logger });
  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return send(200, { status: 'ok' });
    if (path === '/metrics') return metrics(req, res);
    if (path === '/readyz') {
      try {
        await options.ready();
        return send(200, { status: 'ready' });
      } catch (error) {
        return send(503, { status: 'unavailable', message: (error as Error).message });
      }
    }
    send(404, { message: 'Not found.', message_code: 'not_found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
