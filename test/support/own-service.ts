import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One of the platform's own services, as a test stands it up: name its URL in the platform's configuration. */
export interface OwnService {
  /** `http://localhost:<port>`, as `didyma dev` names its own services on loopback. */
  url: string;
  port: number;
  /** Requests that reached it; a tenant's URL must never make one. */
  requests: number;
  close(): Promise<void>;
}

/** An HTTP server on loopback that counts what reaches it, to stand for the platform's Prometheus. */
export async function startOwnService(): Promise<OwnService> {
  const server = http.createServer((_req, res) => {
    service.requests += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  const service: OwnService = {
    url: `http://localhost:${port}`,
    port,
    requests: 0,
    close: () => new Promise((done) => server.close(() => done())),
  };
  return service;
}
