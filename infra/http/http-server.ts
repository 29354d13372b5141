import http from 'node:http';
import type { RequestListener } from 'node:http';
import { answerClientErrors } from './client-errors.js';

/**
 * An HTTP server as every server of the platform runs: the error body for
 * requests that never reach the app, and an idle keep-alive longer than that
 * of the clients and proxies in front (60 s on most load balancers, 4 s in
 * Node's fetch), so the client always closes an idle connection first and
 * never sends a request on one the server is closing.
 */
export function createHttpServer(app: RequestListener): http.Server {
  const server = http.createServer(app);
  answerClientErrors(server);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000;
  return server;
}
