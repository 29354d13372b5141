import { expect } from 'chai';
import express from 'express';
import { listen } from '../../test/support/platform.js';
import { Client } from '../../test/support/http.js';
import { fixedEndpoints, inTurn, leanJson, whenBody } from './pipeline.js';

describe('HTTP pipeline pieces', () => {
  let client: Client;
  let close: () => void;
  const seen: string[] = [];

  before(async () => {
    const app = express();
    app.response.json = leanJson;
    app.use(
      inTurn(
        (_req, _res, next) => void (seen.push('first'), next()),
        (req, _res, next) => (req.path === '/fail' ? next(new Error('stop')) : next()),
        async (req, _res, next) => (req.path === '/rejects' ? Promise.reject(new Error('rejected')) : next()),
        (req, _res, next) => (req.path === '/skip' ? next('route') : next()),
        async (req, _res, next) => (req.path === '/silent-async' ? Promise.reject(undefined as unknown as Error) : next()),
        fixedEndpoints({ '/fixed': (_req, res) => void res.json({ fixed: true }), '/skip': (_req, res) => void res.json({ reached: true }), '/async': async () => Promise.reject(new Error('async')) }),
      ),
    );
    app.use(whenBody(express.json()));
    app.post('/echo', (req, res) => void res.json({ body: req.body ?? null }));
    app.get('/unicode', (_req, res) => void res.json({ text: 'héllo ✓' }));
    app.get('/empty', (_req, res) => void res.status(204).json({ ignored: true }));
    app.use((_req, res) => void res.status(404).json({ missing: true }));
    app.use(((error, _req, res, _next) => void res.status(500).json({ error: (error as Error).message })) as express.ErrorRequestHandler);
    const { url, server } = await listen(app);
    client = new Client(url);
    close = () => server.close();
  });
  after(() => close());

  it('runs the handlers in turn as one middleware, and leaves at the first error', async () => {
    seen.length = 0;
    expect((await client.get('/fixed')).body).to.deep.equal({ fixed: true });
    expect(seen).to.deep.equal(['first']);
    expect((await client.get('/fail')).body).to.deep.equal({ error: 'stop' });
    expect((await client.get('/async')).body).to.deep.equal({ error: 'async' });
    expect((await client.get('/rejects')).body).to.deep.equal({ error: 'rejected' });
  });

  it("skips the rest on next('route'), and takes a rejection without a reason for an error", async () => {
    expect((await client.get('/skip')).body).to.deep.equal({ missing: true });
    expect((await client.get('/silent-async')).body).to.deep.equal({ error: 'A handler failed without a reason.' });
  });

  it('serves fixed endpoints to GET and HEAD only', async () => {
    expect((await client.request('HEAD', '/fixed')).status).to.equal(200);
    expect((await client.post('/fixed')).status).to.equal(404);
  });

  it('parses a body only when the request has one', async () => {
    expect((await client.post('/echo', { json: { a: 1 } })).body).to.deep.equal({ body: { a: 1 } });
    expect((await client.post('/echo')).body).to.deep.equal({ body: null });
  });

  it('writes JSON with its byte length and charset, and no body for 204', async () => {
    const reply = await client.get('/unicode');
    expect(reply.body).to.deep.equal({ text: 'héllo ✓' });
    expect(reply.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(Number(reply.headers.get('content-length'))).to.equal(Buffer.byteLength(reply.text));
    const empty = await client.get('/empty');
    expect(empty.status).to.equal(204);
    expect(empty.text).to.equal('');
  });
});
