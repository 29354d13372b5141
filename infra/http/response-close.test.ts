import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { pino } from 'pino';
import { listen } from '../../test/support/platform.js';
import { createHttpApp } from './app.js';
import type { OpenApiDocument } from './openapi.js';
import { operationRoutes } from './operations/routes.js';
import { onResponseClose } from './response-close.js';

const doc = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: { '/api/file': { get: { responses: { '200': { description: 'a file', content: { 'application/octet-stream': { schema: { type: 'string' } } } } } } } },
} as unknown as OpenApiDocument;

describe('callbacks at the close of a response', () => {
  it('run once each, in the order given, on one close listener', async () => {
    const calls: string[] = [];
    let listeners = 0;
    const server = http.createServer((_req, res) => {
      for (const name of ['span', 'log', 'audit']) onResponseClose(res, () => calls.push(name));
      listeners = res.listenerCount('close');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)).text();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(calls).to.deep.equal(['span', 'log', 'audit']);
      expect(listeners).to.equal(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  // The tracer's global provider is left alone: the server span module keeps the tracer it got at load.
  it('keep a streamed download, logged, counted and audited, on one close listener of its middlewares and under the leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    let ours = 0;
    const routes = operationRoutes().get('/api/file', async (_req, res) => {
      ours = res.listenerCount('close');
      res.setHeader('Content-Type', 'application/octet-stream');
      await pipeline(Readable.from([Buffer.alloc(64 * 1024), Buffer.alloc(64 * 1024)]), res);
    });
    const audit = (_req: unknown, res: Parameters<typeof onResponseClose>[0], next: () => void) => {
      onResponseClose(res, () => undefined);
      next();
    };
    const app = createHttpApp({ name: 't', logger: pino({ level: 'silent' }), openApi: doc, routes, maxBodyBytes: 100, trustProxy: 'false', validateResponses: false, maxInFlight: 10, audit, ready: async () => undefined });
    const { server, url } = await listen(app);
    try {
      const answer = await fetch(`${url}/api/file`);
      expect((await answer.arrayBuffer()).byteLength).to.equal(128 * 1024);
      await new Promise((resolve) => setImmediate(resolve));
      expect(ours, 'close listeners of the middlewares').to.equal(1);
      expect(warnings).to.not.include('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      server.closeAllConnections();
      server.close();
    }
  });
});
