import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { login, makeUser, makeWorkspace, startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import type { Client } from '../../test/support/http.js';

// Bad input at the edges of the three servers: a clear 4xx, never a 500,
// and an anonymous caller learns nothing about the body before a 401.

describe('bad input on every server: authentication first, then a clear 4xx', () => {
  let t: TestPlatform;
  let token: string;
  let servers: Array<{ name: string; client: Client; path: string }>;

  before(async () => {
    t = await startTestPlatform();
    const supervisor = await makeUser(t.platform);
    const ws = await makeWorkspace(t.platform, [[supervisor, 'supervisor']]);
    token = (await login(t.auth, supervisor, ws.name)).access;
    // A guarded operation with a JSON body on each server.
    servers = [
      { name: 'auth', client: t.auth, path: '/api/auth/invitation' },
      { name: 'private', client: t.private, path: '/api/deployment' },
      { name: 'public', client: t.public, path: `/api/model/m/version/1/session/${crypto.randomUUID()}/invocation` },
    ];
  });
  after(() => t.close());

  const gzipHeaders = { 'content-type': 'application/json', 'content-encoding': 'gzip' };

  for (const name of ['auth', 'private', 'public']) {
    describe(`${name} server`, () => {
      const server = () => servers.find((s) => s.name === name)!;

      it('answers 401 to an anonymous request whatever its body: malformed, corrupt or deeply nested', async () => {
        const { client, path } = server();
        for (const options of [
          { rawBody: '{"not json', headers: { 'content-type': 'application/json' } },
          { rawBody: Buffer.from('not gzip at all'), headers: gzipHeaders },
          { rawBody: '['.repeat(500) + ']'.repeat(500), headers: { 'content-type': 'application/json' } },
          { json: { unexpected: 'field' } },
        ]) {
          const reply = await client.post(path, options);
          expect(reply.status, JSON.stringify(reply.body)).to.equal(401);
        }
      });

      it('answers 400 to a corrupt gzip body and 415 to an unknown Content-Encoding, once authenticated', async () => {
        const { client, path } = server();
        const corrupt = await client.post(path, { token, rawBody: Buffer.from('not gzip at all'), headers: gzipHeaders });
        expect(corrupt.status, JSON.stringify(corrupt.body)).to.equal(400);
        expect(corrupt.body).to.include({ message_code: 'bad_request' });
        const truncated = await client.post(path, { token, rawBody: zlib.gzipSync('{"a":1}').subarray(0, 12), headers: gzipHeaders });
        expect(truncated.status).to.equal(400);
        const unknown = await client.post(path, { token, rawBody: Buffer.from('{}'), headers: { 'content-type': 'application/json', 'content-encoding': 'compress' } });
        expect(unknown.status).to.equal(415);
        expect(unknown.body).to.include({ message_code: 'unsupported_media_type' });
      });
    });
  }

  it('refuses a NUL character in a JSON field, a form field and a query parameter with a 400 naming the field', async () => {
    const email = await t.auth.post('/api/auth/token/obtain', { json: { email: 'a\u0000@example.test', password: 'x' } });
    expect(email.status).to.equal(400);
    expect(email.body.message).to.equal('email: must not contain NUL characters.');
    expect(email.body.details).to.deep.equal([{ field: 'email', message: 'must not contain NUL characters' }]);

    const invocationPath = servers.find((s) => s.name === 'public')!.path;
    const nested = await t.public.post(invocationPath, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: '{"a":"x\u0000"}' } } });
    expect(nested.status).to.equal(400);
    expect(nested.body.details[0].field).to.equal('request.body');

    const form = await t.auth.post('/o/token', { form: { grant_type: 'client_credentials', client_id: 'id\u0000', client_secret: 's' } });
    expect(form.status).to.equal(400);
    expect(form.body.details[0].field).to.equal('client_id');

    const query = await t.private.get('/api/metric/active_sessions?model_code=%00', { token });
    expect(query.status).to.equal(400);
    expect(query.body.details[0].field).to.equal('model_code');
  });
});
