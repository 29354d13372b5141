import http from 'node:http';
import type { Express } from 'express';
import type { Platform } from '../platform/platform.js';
import { createAuthServer } from '../api/auth/server.js';
import { createPrivateServer } from '../api/private/server.js';
import { createPublicServer } from '../api/public/server.js';

export type { ServerName } from '../api/shared/server-app.js';
import type { ServerName } from '../api/shared/server-app.js';

const factories: Record<ServerName, (platform: Platform) => Express> = {
  auth: createAuthServer,
  private: createPrivateServer,
  public: createPublicServer,
};

export interface RunningServer {
  name: ServerName;
  url: string;
  close(): Promise<void>;
}

/** Starts the named servers of one process on their configured ports. */
export async function startServers(platform: Platform, names: ServerName[]): Promise<RunningServer[]> {
  const ports: Record<ServerName, number> = {
    auth: platform.config.authPort,
    private: platform.config.privatePort,
    public: platform.config.publicPort,
  };
  const running: RunningServer[] = [];
  // The public server queues invocations: its relay publishes them.
  if (names.includes('public')) platform.relay.start();
  // The private server writes custom resources (Kubernetes mode): it also repairs their drift.
  if (names.includes('private')) platform.kube?.resync.start();
  for (const name of names) {
    const server = http.createServer(factories[name](platform));
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 120_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[name], platform.config.bindHost, resolve);
    });
    const url = `http://${platform.config.bindHost === '0.0.0.0' ? '127.0.0.1' : platform.config.bindHost}:${ports[name]}`;
    platform.logger.info({ server: name, url }, 'listening');
    running.push({
      name,
      url,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
    });
  }
  return running;
}
