import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { listen } from '../../../test/support/platform.js';
import { Client } from '../../../test/support/http.js';
import { createHttpApp } from '../app.js';
import type { OpenApiDocument } from '../openapi.js';
import { operationRoutes } from './routes.js';
import { PathTable } from './path-table.js';

// The compiled OpenAPI layer through a real express app (createHttpApp): the
// operation lookup, the request checks, the handlers, and the response check
// tests turn on.

const doc = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/api/item/{itemId}': {
      parameters: [{ $ref: '#/components/parameters/itemId' }],
      get: {
        parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 10, default: 5 } }],
        responses: { '200': { $ref: '#/components/responses/Item' }, '4XX': { $ref: '#/components/responses/Error' } },
      },
      put: {
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ItemInput' } } } },
        responses: { '200': { $ref: '#/components/responses/Item' }, '400': { $ref: '#/components/responses/Error' }, '415': { $ref: '#/components/responses/Error' } },
      },
    },
    '/api/item/{itemId}/files/latest': {
      parameters: [{ $ref: '#/components/parameters/itemId' }],
      get: { responses: { '200': { description: 'literal', content: { 'application/json': { schema: { type: 'object' } } } } } },
    },
    '/api/item/{itemId}/files/{fileName}': {
      parameters: [{ $ref: '#/components/parameters/itemId' }, { name: 'fileName', in: 'path', required: true, schema: { type: 'string', maxLength: 20 } }],
      get: { responses: { '200': { description: 'param', content: { 'application/json': { schema: { type: 'object' } } } } } },
      post: {
        requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } } } },
        responses: { '201': { description: 'stored', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  },
  components: {
    parameters: { itemId: { name: 'itemId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } } },
    schemas: {
      ItemInput: { type: 'object', required: ['name', 'kind'], additionalProperties: false, properties: { name: { type: 'string', maxLength: 10 }, kind: { enum: ['A', 'B'] }, size: { type: 'integer' } } },
      Item: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, limit: { type: 'integer' } } },
    },
    responses: {
      Item: { description: 'An item', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } },
      Error: { description: 'Error', content: { 'application/json': { schema: { type: 'object', required: ['message', 'message_code'] } } } },
    },
  },
} as unknown as OpenApiDocument;

const ID = '4b1e3f0e-2c1a-4d59-9a4e-3f5b7c2d1e00';

describe('OpenAPI operations (compiled once, served in one middleware)', () => {
  let client: Client;
  let close: () => void;
  const errors: Array<Record<string, unknown>> = [];
  let answerWith: unknown;

  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        const line = JSON.parse(String(chunk));
        if (line.level >= 50) errors.push(line);
        callback();
      },
    });
    const routes = operationRoutes()
      .get('/api/item/:itemId', (req, res) => void res.json(answerWith ?? { id: req.params.itemId, limit: req.query.limit }))
      .put('/api/item/:itemId', (_req, _res, next) => next(), async (req, res) => {
        if (req.body.name === 'boom') throw new Error('boom');
        res.json({ id: req.params.itemId, name: req.body.name, size: req.body.size });
      })
      .get('/api/item/:itemId/files/latest', (_req, res) => void res.json({ matched: 'literal' }))
      .get('/api/item/:itemId/files/:fileName', (req, res) => void res.json({ matched: 'param', fileName: req.params.fileName }))
      .post('/api/item/:itemId/files/:fileName', (req, res) => void res.status(201).json({ streamed: req.body === undefined }));
    const app = createHttpApp({ name: 'test', logger: pino({ level: 'info' }, sink), openApi: doc, routes, maxBodyBytes: 10_000, trustProxy: 'false', validateResponses: true, ready: async () => undefined });
    const { url, server } = await listen(app);
    client = new Client(url);
    close = () => server.close();
  });
  after(() => close());
  beforeEach(() => {
    errors.length = 0;
    answerWith = undefined;
  });

  it('finds the operation, decodes and checks path parameters, and coerces the query with its defaults', async () => {
    expect((await client.get(`/api/item/${ID}?limit=3`)).body).to.deep.equal({ id: ID, limit: 3 });
    expect((await client.get(`/API/Item/${ID}`)).body).to.deep.equal({ id: ID, limit: 5 });
    const bad = await client.get('/api/item/not-a-uuid');
    expect(bad.status).to.equal(400);
    expect(bad.body).to.include({ message_code: 'validation_error', message: 'itemId: must match format "uuid"' });
    expect(bad.body.details).to.deep.equal([{ field: 'itemId', message: 'must match format "uuid"' }]);
    expect((await client.get(`/api/item/${ID}?limit=11`)).body.message).to.equal('limit: must be <= 10');
    expect((await client.get(`/api/item/${ID}?limit=two`)).body.message).to.equal('limit: must be integer');
    expect((await client.get(`/api/item/${ID}?other=1`)).body).to.include({ message: "Unknown query parameter 'other'." });
    expect((await client.get(`/api/item/${ID}?limit=`)).status).to.equal(400);
    expect((await client.get('/api/item/%E0%A4%A')).status).to.equal(400);
  });

  it('refuses numbers that Ajv coerces from text to infinity, which its range keywords let through', async () => {
    for (const limit of ['1e309', 'Infinity', '-Infinity']) {
      const reply = await client.get(`/api/item/${ID}?limit=${limit}`);
      expect(reply.status, limit).to.equal(400);
      expect(reply.body.details).to.deep.equal([{ field: 'limit', message: 'must be a finite number' }]);
    }
    const body = await client.put(`/api/item/${ID}`, { json: { name: 'x', kind: 'A', size: '1e309' } });
    expect(body.status).to.equal(400);
    expect(body.body.message).to.equal('size: must be a finite number');
    expect(errors, 'no server error logged').to.deep.equal([]);
  });

  it('prefers a literal segment to a parameter, and backtracks when the literal leads nowhere', async () => {
    expect((await client.get(`/api/item/${ID}/files/latest`)).body).to.deep.equal({ matched: 'literal' });
    expect((await client.get(`/api/item/${ID}/files/report%20one`)).body).to.deep.equal({ matched: 'param', fileName: 'report one' });
    const table = new PathTable<string>();
    table.add('/a/latest/x', 'get', 'literal');
    table.add('/a/{p}/y', 'get', 'param');
    expect(table.match('/a/latest/y')).to.deep.include({ params: { p: 'latest' } });
    expect(table.match('/a/latest/x')?.methods.get('get')).to.equal('literal');
    expect(table.match('/a//y')).to.equal(undefined);
  });

  it('answers 404 outside the document and 405 with Allow for another method', async () => {
    expect((await client.get('/api/nothing')).status).to.equal(404);
    const wrong = await client.request('DELETE', `/api/item/${ID}`);
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.equal('GET, PUT');
    expect(wrong.body.message_code).to.equal('method_not_allowed');
  });

  it('checks JSON bodies: required, types, enums, unknown properties; 415 for another media type', async () => {
    expect((await client.put(`/api/item/${ID}`, { json: { name: 'x', kind: 'A', size: '7' } })).body).to.deep.equal({ id: ID, name: 'x', size: 7 });
    const cases: Array<[unknown, string]> = [
      [{ kind: 'A' }, "name: must have required property 'name'"],
      [{ name: 'x', kind: 'C' }, 'kind: must be equal to one of the allowed values: A, B'],
      [{ name: 'x', kind: 'A', extra: 1 }, 'extra: must NOT have additional properties'],
      [{ name: 'much too long', kind: 'A' }, 'name: must NOT have more than 10 characters'],
      [[1], 'must be object'],
    ];
    for (const [json, message] of cases) {
      const reply = await client.put(`/api/item/${ID}`, { json });
      expect(reply.status, message).to.equal(400);
      expect(reply.body.message).to.equal(message);
    }
    expect((await client.put(`/api/item/${ID}`, { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } })).status).to.equal(415);
    expect((await client.put(`/api/item/${ID}`)).status).to.equal(415);
    expect((await client.put(`/api/item/${ID}`, { rawBody: '', headers: { 'content-type': 'application/json' } })).body.message).to.equal("name: must have required property 'name'");
  });

  it('leaves multipart bodies to their handler, which reads the stream', async () => {
    const form = new FormData();
    form.append('file', new Blob(['abc']), 'a.txt');
    expect((await client.post(`/api/item/${ID}/files/a.txt`, { multipart: form })).body).to.deep.equal({ streamed: true });
  });

  it('runs handlers in turn and hands a rejected promise to the error middleware', async () => {
    const reply = await client.put(`/api/item/${ID}`, { json: { name: 'boom', kind: 'B' } });
    expect(reply.status).to.equal(500);
    expect(reply.body.message_code).to.equal('internal_error');
  });

  it('checks responses against the document when asked: a mismatch is a 500 and an error line', async () => {
    answerWith = { id: 42 };
    const reply = await client.get(`/api/item/${ID}`);
    expect(reply.status).to.equal(500);
    expect(errors.filter((line) => line.problem).map((line) => line.problem)).to.deep.equal(['id: must be string']);
  });

  it('refuses to start when a handler has no operation or an operation no handler', () => {
    const app = (routes: ReturnType<typeof operationRoutes>) => () =>
      createHttpApp({ name: 't', logger: pino({ level: 'silent' }), openApi: doc, routes, maxBodyBytes: 1000, trustProxy: 'false', validateResponses: false, ready: async () => undefined });
    const all = () =>
      operationRoutes()
        .get('/api/item/:itemId', () => undefined)
        .put('/api/item/:itemId', () => undefined)
        .get('/api/item/:itemId/files/latest', () => undefined)
        .get('/api/item/:itemId/files/:fileName', () => undefined)
        .post('/api/item/:itemId/files/:fileName', () => undefined);
    expect(app(all())).to.not.throw();
    expect(app(all().delete('/api/item/:itemId', () => undefined))).to.throw(/DELETE \/api\/item\/\{itemId\}/);
    expect(app(operationRoutes().get('/api/item/:itemId', () => undefined))).to.throw(/has no handler/);
  });
});
