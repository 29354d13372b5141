import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { constantTimeEqual } from '../../infra/crypto/random.js';
import type { InferenceRequestBody } from './demo-model.js';
import { BadInferenceRequest, ModelFailure } from './problems.js';
import { DemoModelService, NotServedHere, type DemoStats } from './service.js';

export type { DemoStats };

export interface DemoModelServerOptions {
  /** When set, every /v2 endpoint but health requires `Authorization: Bearer <token>`. */
  token?: string;
  logger?: Logger;
  /** Largest request body. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Serve every model under this version instead of "1"; `*`: under whichever version a request names. */
  version?: string;
  /** Each inference takes at least this long (tests of work in flight). */
  inferenceDelayMs?: number;
}

export interface DemoModelServer {
  /** Defaults: port 8090 on 127.0.0.1. Port 0 picks a free port; the answer says which. */
  listen(port?: number, host?: string): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
  stats(): DemoStats;
  resetStats(): void;
  /** The most inferences it has served at once since it started (tests of concurrency limits). */
  maxConcurrentInferences(): number;
  /** Inference requests whose client went away before the answer (tests of aborted calls). */
  abandonedInferences(): number;
}

interface Route {
  method: string;
  pattern: RegExp;
  /** Health and the demo statistics answer without the token. */
  open?: boolean;
  handle: (params: string[], req: IncomingMessage) => unknown;
}

const MODEL = '\\/v2\\/models\\/([^/]+)(?:\\/versions\\/([^/]+))?';

/**
 * A small, real Open Inference Protocol (v2) server with an Iris classifier,
 * an explainer for it and a model that always fails. `didyma
 * demo-model-server` runs it for the quickstart; tests start it on port 0.
 */
export function createDemoModelServer(options: DemoModelServerOptions = {}): DemoModelServer {
  const service = new DemoModelService(options.version);
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const concurrency = { now: 0, max: 0 };
  let abandoned = 0;
  const routes: Route[] = [
    { method: 'GET', pattern: /^\/v2\/health\/(?:live|ready)$/, open: true, handle: () => ({ live: true, ready: true }) },
    { method: 'GET', pattern: /^\/v2\/?$/, handle: () => service.serverMetadata() },
    { method: 'POST', pattern: /^\/v2\/repository\/index$/, handle: () => service.repositoryIndex() },
    { method: 'GET', pattern: new RegExp(`^${MODEL}$`), handle: ([name = '', version]) => service.modelMetadata(name, version) },
    { method: 'GET', pattern: new RegExp(`^${MODEL}\\/ready$`), handle: ([name = '', version]) => service.modelReady(name, version) },
    {
      method: 'POST',
      pattern: new RegExp(`^${MODEL}\\/infer$`),
      handle: async ([name = '', version], req) => {
        const body = (await readJsonObject(req, maxBodyBytes)) as InferenceRequestBody;
        concurrency.max = Math.max(concurrency.max, ++concurrency.now);
        try {
          if (options.inferenceDelayMs) await new Promise((resolve) => setTimeout(resolve, options.inferenceDelayMs));
          return service.infer(name, version, body);
        } finally {
          concurrency.now -= 1;
        }
      },
    },
    { method: 'GET', pattern: /^\/demo\/stats$/, open: true, handle: () => service.stats() },
    { method: 'DELETE', pattern: /^\/demo\/stats$/, open: true, handle: () => (service.resetStats(), service.stats()) },
  ];
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url?.endsWith('/infer')) res.on('close', () => (abandoned += res.writableFinished ? 0 : 1));
    void answer(req, res, routes, options);
  });
  return {
    listen: (port = 8090, host = '127.0.0.1') => listen(server, port, host),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    stats: () => service.stats(),
    resetStats: () => service.resetStats(),
    maxConcurrentInferences: () => concurrency.max,
    abandonedInferences: () => abandoned,
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, routes: Route[], options: DemoModelServerOptions): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://demo').pathname;
  const route = routes.find((r) => r.method === req.method && r.pattern.test(path));
  let status = 200;
  let body: unknown;
  try {
    if (!route) throw new NotServedHere(`no endpoint ${req.method} ${path}`);
    if (options.token && !route.open && !authorized(req, options.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      [status, body] = [401, { error: 'missing or invalid bearer token' }];
    } else {
      body = await route.handle(pathParams(route.pattern, path), req);
    }
  } catch (error) {
    [status, body] = failure(error, options.logger);
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function listen(server: http.Server, port: number, host: string): Promise<{ url: string; port: number }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({ url: `http://${shownHost}:${address.port}`, port: address.port });
    });
  });
}

function pathParams(pattern: RegExp, path: string): string[] {
  return (pattern.exec(path) ?? []).slice(1).map((part) => (part === undefined ? part : decodeSegment(part))) as string[];
}

function decodeSegment(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new BadInferenceRequest('malformed percent-encoding in the path');
  }
}

function authorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') && constantTimeEqual(header.slice(7), token);
}

async function readJsonObject(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BadInferenceRequest(`the request body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadInferenceRequest('the request body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadInferenceRequest('the request body must be a JSON object');
  return value as Record<string, unknown>;
}

/** Errors in the protocol's shape, `{error}`; anything unexpected is logged and hidden. */
function failure(error: unknown, logger: Logger | undefined): [number, { error: string }] {
  if (error instanceof NotServedHere) return [404, { error: error.message }];
  if (error instanceof BadInferenceRequest || error instanceof ModelFailure) return [error.status, { error: error.message }];
  logger?.error({ err: error }, 'demo model server failed');
  return [500, { error: 'internal error' }];
}
