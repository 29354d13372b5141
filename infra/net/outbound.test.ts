import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startSilentServer, type SilentServer } from '../../test/support/silent-server.js';
import { DeadlineError, Outbound, OutboundClosedError, type Deadlines } from './outbound.js';

/** The error (or the end) of one GET through `outbound`, and how long it took. */
function get(outbound: Outbound, port: number, overrides?: Partial<Deadlines>, host = '127.0.0.1'): Promise<{ error?: Error; body?: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const done = (result: { error?: Error; body?: string }) => resolve({ ...result, ms: Date.now() - started });
    const request = outbound.request(
      { protocol: 'http:', host, port, path: '/', method: 'GET' },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done({ body: Buffer.concat(chunks).toString() }));
        response.on('error', (error) => done({ error }));
      },
      overrides,
    );
    request.on('error', (error) => done({ error }));
    request.end();
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('Outbound: deadlines of every outbound request', () => {
  const deadlines = { connectMs: 200, headersMs: 300, totalMs: 1_000 };
  let outbound: Outbound;
  let silent: SilentServer;
  beforeEach(async () => {
    outbound = new Outbound({ deadlines });
    silent = await startSilentServer();
  });
  afterEach(async () => {
    outbound.close();
    await silent.close();
  });

  it('gives up on a peer that accepts and never answers at the headers deadline, and closes the connection', async () => {
    const outcome = await get(outbound, silent.port);
    expect(outcome.error).to.be.instanceOf(DeadlineError);
    expect(outcome.error?.message).to.equal('no answer within 300 ms of the request');
    expect(outcome.ms).to.be.within(280, 900);
    await settle();
    expect(await silent.connections(), 'connections left open to the silent peer').to.equal(0);
    expect(outbound.openRequests).to.equal(0);
  });

  it('gives up on an answer that trickles in at the total deadline', async () => {
    const trickle = http.createServer((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('x'), 20);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => trickle.listen(0, '127.0.0.1', resolve));
    try {
      const outcome = await get(outbound, (trickle.address() as AddressInfo).port);
      expect(outcome.error?.message).to.equal('no complete answer within 1000 ms');
      await settle();
      expect(await new Promise((resolve) => trickle.getConnections((_e, count) => resolve(count)))).to.equal(0);
    } finally {
      await new Promise((resolve) => trickle.close(resolve));
    }
  });

  it('counts name resolution in the connect deadline', async () => {
    const hanging = new Outbound({ deadlines, lookupFor: () => () => undefined });
    try {
      const outcome = await get(hanging, silent.port, undefined, 'hangs.example.test');
      expect((outcome.error as DeadlineError).deadline).to.equal('connect');
      expect(outcome.error?.message).to.equal('no connection within 200 ms');
    } finally {
      hanging.close();
    }
  });

  it('lets one request change its deadlines', async () => {
    const outcome = await get(outbound, silent.port, { headersMs: 100 });
    expect(outcome.error?.message).to.equal('no answer within 100 ms of the request');
  });

  it('answers normally within the deadlines and keeps the connection for the next request', async () => {
    const server = http.createServer((_req, res) => res.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    let connections = 0;
    server.on('connection', () => (connections += 1));
    try {
      const port = (server.address() as AddressInfo).port;
      expect((await get(outbound, port)).body).to.equal('hello');
      expect((await get(outbound, port)).body).to.equal('hello');
      expect(connections).to.equal(1);
      // Past every deadline, a kept-alive connection is not cut.
      await new Promise((resolve) => setTimeout(resolve, deadlines.totalMs + 100));
      expect((await get(outbound, port)).body).to.equal('hello');
      expect(connections).to.equal(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('cuts the requests still open when it closes, and refuses new ones', async () => {
    const accepted = silent.accepted();
    const pending = get(outbound, silent.port, { headersMs: 60_000, totalMs: 60_000 });
    await accepted;
    outbound.close();
    const outcome = await pending;
    expect(outcome.error).to.be.instanceOf(OutboundClosedError);
    expect(outcome.ms).to.be.below(1_000);
    expect((await get(outbound, silent.port)).error).to.be.instanceOf(OutboundClosedError);
    await settle();
    expect(await silent.connections()).to.equal(0);
  });
});
