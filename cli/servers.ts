import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Express } from 'express';
import type { Platform } from '../platform/platform.js';
import { createAuthServer } from '../api/auth/server.js';
import { createPrivateServer } from '../api/private/server.js';
import { createPublicServer } from '../api/public/server.js';

export type { ServerName } from '../api/shared/server-app.js';
import type { ServerName } from '../api/shared/server-app.js';
import { createHttpServer } from '../infra/http/http-server.js';
import type { MetricsHandler } from '../infra/http/metrics-exposition.js';
import { onResponseClose } from '../infra/http/response-close.js';

const factories: Record<ServerName, (platform: Platform) => Express> = {
  auth: createAuthServer,
  private: createPrivateServer,
  public: createPublicServer,
};

export interface RunningServer {
  /** An API server, or the listener of their `/metrics` when `DIDYMA_METRICS_PORT` is set. */
  name: ServerName | 'metrics';
  url: string;
  close(): Promise<void>;
}

interface Traffic {
  inFlight: number;
  lastRequestAt: number;
  /** Resolves once no response is open: each has run its close callbacks (log line, audit record). */
  settled(): Promise<void>;
}

/** How many requests the server is answering, and when the last one came. */
function trafficOf(server: http.Server): Traffic {
  let waiting: Array<() => void> = [];
  const traffic: Traffic = {
    inFlight: 0,
    lastRequestAt: 0,
    settled: () => (traffic.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve))),
  };
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    traffic.inFlight += 1;
    traffic.lastRequestAt = Date.now();
    onResponseClose(res, () => {
      traffic.inFlight -= 1;
      if (traffic.inFlight > 0) return;
      for (const resolve of waiting) resolve();
      waiting = [];
    });
  });
  return traffic;
}

/** Quiet this long with nothing in flight, the clients have gone: a load balancer has stopped sending. */
const QUIET_MS = 500;
/** The end of the grace period left to the platform's own closing (outbound calls, queue, database) once connections are cut, at most a quarter of it. */
const CLOSING_MS = 3_000;

/**
 * Closes a server without cutting a request: while the platform drains, every
 * answer says `Connection: close`, and requests are still taken until they
 * stop coming (a load balancer takes a moment to stop sending), for at most
 * `drainMs`; then the listener closes, idle connections with it, and requests
 * still running get until `graceMs` after the start, less a moment for the
 * platform to close, before their connections are cut, whatever the peer.
 */
async function drainAndClose(server: http.Server, traffic: Traffic, drainMs: number, graceMs: number): Promise<void> {
  const started = Date.now();
  const drainEnds = started + drainMs;
  while (Date.now() < drainEnds && (traffic.inFlight > 0 || Date.now() - traffic.lastRequestAt < QUIET_MS)) await sleep(50);
  const cutAt = started + graceMs - Math.min(CLOSING_MS, graceMs / 4);
  const cut = setTimeout(() => server.closeAllConnections(), Math.max(0, cutAt - Date.now()));
  // A kept-alive connection whose request ends after the listener closed would otherwise wait out its keep-alive timeout.
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  // A cut connection's response closes after the server does (libuv's close phase): the platform, its audit trail
  // and database with it, closes only once each response has handed in its record.
  await traffic.settled();
  clearTimeout(cut);
  clearInterval(idle);
}

/** Starts the named servers of one process on their configured ports. */
export async function startServers(platform: Platform, names: ServerName[]): Promise<RunningServer[]> {
  const ports: Record<ServerName, number> = {
    auth: platform.config.authPort,
    private: platform.config.privatePort,
    public: platform.config.publicPort,
  };
  const running: RunningServer[] = [];
  // The private server writes custom resources (Kubernetes mode): it also repairs their drift, and registers KServe revisions.
  if (names.includes('private')) platform.kube?.startPrivateTasks();
  const { metricsPort } = platform.config;
  const listeners: Array<{ name: RunningServer['name']; app: http.RequestListener; port: number }> = names.map((name) => ({ name, app: factories[name](platform), port: ports[name] }));
  if (metricsPort !== undefined) listeners.push({ name: 'metrics', app: metricsOnly(platform.metrics.handler(...names)), port: metricsPort });
  for (const { name, app, port } of listeners) {
    const server = createHttpServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, platform.config.bindHost, resolve);
    });
    const url = `http://${platform.config.bindHost === '0.0.0.0' ? '127.0.0.1' : platform.config.bindHost}:${(server.address() as AddressInfo).port}`;
    platform.logger.info({ server: name, url }, 'listening');
    const traffic = trafficOf(server);
    running.push({ name, url, close: () => drainAndClose(server, traffic, platform.config.shutdownDrainSeconds * 1000, platform.config.shutdownGraceSeconds * 1000) });
  }
  return running;
}

/** The metrics port answers `/metrics` and nothing else. */
function metricsOnly(metrics: MetricsHandler): http.RequestListener {
  return (req, res) => {
    if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) return void metrics(req, res);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Only /metrics is served on this port.', message_code: 'not_found' }));
  };
}
