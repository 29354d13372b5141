import { expect } from 'chai';
import express from 'express';
import { pino } from 'pino';
import { listen } from '../../test/support/platform.js';
import { Client } from '../../test/support/http.js';
import { requestLog } from './request-log.js';
import { jsonLines } from '../../test/support/capture.js';

describe('request log', () => {
  const lines: Array<Record<string, unknown>> = [];
  let client: Client;
  let close: () => void;

  before(async () => {
    const sink = jsonLines(lines);
    const app = express();
    app.use(requestLog(pino({ level: 'info' }, sink), new Set(['/healthz'])));
    app.get('/healthz', (_req, res) => void res.json({ ok: true }));
    app.get('/boom', (_req, res) => void res.status(500).json({}));
    app.get('/ok', (req, res) => void res.json({ id: req.id }));
    const { url, server } = await listen(app);
    client = new Client(url);
    close = () => server.close();
  });
  after(() => close());
  beforeEach(() => (lines.length = 0));

  const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

  it('keeps a well-formed X-Request-Id, replaces anything else, and answers with it', async () => {
    const kept = await client.get('/ok', { headers: { 'x-request-id': 'abc-123' } });
    expect(kept.headers.get('x-request-id')).to.equal('abc-123');
    expect(kept.body.id).to.equal('abc-123');
    const replaced = await client.get('/ok', { headers: { 'x-request-id': 'not/allowed'.repeat(2) } });
    expect(replaced.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('logs one line per request without headers, 5xx as errors, and nothing for probes', async () => {
    await client.get('/ok', { token: 'secret-token' });
    await client.get('/boom');
    await client.get('/healthz');
    await settled();
    expect(lines.map((l) => [l.url, l.status, l.level])).to.deep.equal([
      ['/ok', 200, 30],
      ['/boom', 500, 50],
    ]);
    expect(JSON.stringify(lines)).to.not.include('secret-token');
    expect(lines[0]).to.include.keys('reqId', 'method', 'ms');
  });

  it('logs requests at the level it is given, so a quieter logger leaves them out, never their 5xx errors', async () => {
    const quiet: Array<Record<string, unknown>> = [];
    const sink = jsonLines(quiet);
    const app = express();
    app.use(requestLog(pino({ level: 'info' }, sink), new Set(), (url) => url, 'debug'));
    app.get('/ok', (_req, res) => void res.json({}));
    app.get('/boom', (_req, res) => void res.status(500).json({}));
    const { url, server } = await listen(app);
    try {
      const other = new Client(url);
      await other.get('/ok');
      await other.get('/boom');
      await settled();
      expect(quiet.map((l) => [l.url, l.level])).to.deep.equal([['/boom', 50]]);
    } finally {
      server.close();
    }
  });
});
