import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { parse } from 'yaml';
import { responseAjv } from './operations/ajv.js';
import { answerClientErrors } from './client-errors.js';

/** Sends bytes as they are and reads the whole answer. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

describe('requests that never reach the app', () => {
  let server: http.Server;
  let port: number;
  const doc = parse(fs.readFileSync('api/public/openapi.yaml', 'utf8')) as object;
  const isError = responseAjv().addSchema(doc, 'doc').getSchema('doc#/components/schemas/Error')!;

  before(async () => {
    server = http.createServer((_req, res) => void res.end('reached'));
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  const answerOf = (raw: string) => {
    const [head, body] = raw.split('\r\n\r\n') as [string, string];
    return { status: Number(head.split(' ')[1]), head, body: JSON.parse(body) as unknown };
  };

  it('answers headers over the limit with a 431 and the error body', async () => {
    const answer = answerOf(await exchange(port, `GET /api/model?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect(answer.status).to.equal(431);
    expect(answer.head).to.match(/content-type: application\/json/i);
    expect(isError(answer.body), JSON.stringify(answer.body)).to.equal(true);
    expect(answer.body).to.include({ message_code: 'headers_too_large' });
  });

  it('answers bytes that are not HTTP with a 400 and the error body', async () => {
    const answer = answerOf(await exchange(port, 'NOT HTTP AT ALL\r\n\r\n'));
    expect(answer.status).to.equal(400);
    expect(isError(answer.body), JSON.stringify(answer.body)).to.equal(true);
  });

  it('answers headers over the limit with a 431 on a kept-alive socket that served requests before', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\n'));
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        const first = !received.includes('reached');
        received += chunk.toString('utf8');
        // The second request once the first is answered, as a client reusing its connection sends it.
        if (first && received.includes('reached')) socket.end(`GET /b?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
    expect(raw.startsWith('HTTP/1.1 200'), raw.slice(0, 40)).to.equal(true);
    expect(raw).to.include('HTTP/1.1 431 Request Header Fields Too Large');
  });

  it('still serves well-formed requests', async () => {
    expect(await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).to.match(/reached$/);
  });
});
