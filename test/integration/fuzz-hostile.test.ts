import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { startTestPlatform, makeStaff, unique, type TestPlatform } from '../support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { getAsIs, type Reply } from '../support/http.js';
import { COSTLY_PER_BYTE, doublingSchema, SELF_REFERENCE, TWO_CYCLE } from '../support/hostile-schemas.js';

// Hostile input: bodies and uploads over the limits, malformed multipart, path
// traversal in file names, deeply nested JSON, schemas that refer to
// themselves or expand exponentially, bodies too costly to validate, and
// unicode edge cases in names. Each is refused with the documented 4xx and the error body, and
// leaves nothing behind: no row added or changed, no file on disk, the upload
// id still usable.

const LIMITS = { maxBodyBytes: 64 * 1024, maxUploadBytes: 32 * 1024, maxLogoBytes: 4096 };

/** Every table with a workspace_id: where a request of the tenant could write. */
const TENANT_TABLES = ['storage_configs', 'files', 'uploads', 'deployments', 'models', 'model_counts', 'sessions', 'invocations', 'datasets', 'memberships', 'invitations', 'api_tokens', 'oauth_applications', 'refresh_token_families', 'workspace_logos'];

describe('hostile input is refused with the documented 4xx and leaves nothing written', function () {
  this.timeout(300_000);
  let t: TestPlatform;
  let owner: Tenant;
  let staffToken: string;
  let storageKey: string;
  let version: string;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let session: string;

  before(async () => {
    t = await startTestPlatform(LIMITS);
    owner = await tenant(t);
    staffToken = (await makeStaff(t)).token;
    storageKey = await filesystemStorage(t.private, owner.token);
    version = unique('hx');
    demo = await startDemoModelServer(version);
    await demoDeployment(t.private, owner.token, demo.url);
    const card = await upload(t.private, owner.token, storageKey, 'card');
    const schema = { type: 'object', properties: { correct: { type: 'boolean' }, notes: {} } };
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, { feedback_schema: schema }) });
    expect(registered.status, registered.text).to.equal(201);
    session = (await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: owner.token })).body.id;
  });
  after(async () => {
    await demo?.close();
    await t?.close();
  });

  /**
   * What a refused request must leave as it was: the count and a digest of
   * the contents of every table the tenant's rows live in (so an update shows
   * as well as an insert), every workspace, and each file on disk with a
   * digest of its bytes.
   */
  async function written() {
    const db = t.platform.db;
    const digest = async (table: string, where: Record<string, unknown>) => {
      const row = (await db(`${table} as t`).where(where).first(db.raw('count(*)::int as n'), db.raw(`coalesce(md5(string_agg(t::text, '|' order by t::text)), '') as digest`))) as { n: number; digest: string };
      return `${row.n} ${row.digest}`;
    };
    const rows: Record<string, string> = { workspaces: await digest('workspaces', {}) };
    for (const table of TENANT_TABLES) rows[table] = await digest(table, { workspace_id: owner.ws.id });
    const onDisk = listFiles(t.dataDir)
      .filter((f) => !f.includes(`${path.sep}keys${path.sep}`))
      .map((f) => `${f} ${crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex')}`);
    return { rows, onDisk };
  }

  /** Runs `act` and expects that nothing was written (see `written`). */
  async function unchanged<T>(act: () => Promise<T>): Promise<T> {
    const before = await written();
    const result = await act();
    expect(await written(), 'nothing written').to.deep.equal(before);
    return result;
  }

  /** Runs `act`, expects the status and the error body, and that nothing was written. */
  async function refused(act: () => Promise<Reply>, status: number | number[], code?: string) {
    const reply = await unchanged(act);
    const expected = Array.isArray(status) ? status : [status];
    expect(expected, `status ${reply.status}: ${reply.text.slice(0, 300)}`).to.include(reply.status);
    expect(reply.body, reply.text.slice(0, 300)).to.include.keys('message', 'message_code');
    if (code) expect(reply.body.message_code).to.equal(code);
    return reply;
  }

  const ticket = async (extra: Record<string, unknown> = {}) => {
    const reply = await t.private.post(`/api/storage/${storageKey}/files/request_upload`, { token: owner.token, json: { file_name: 'in.txt', content_type: 'text/plain', ...extra } });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.upload_id as string;
  };
  const proxyUpload = (id: string, body: string | Buffer | FormData, contentType?: string) =>
    t.private.request('POST', `/api/storage/${storageKey}/files/proxy_upload/${id}`, {
      token: owner.token,
      ...(body instanceof FormData ? { multipart: body } : { rawBody: body, headers: { 'content-type': contentType ?? 'multipart/form-data; boundary=XyZ' } }),
    });
  const fileForm = (content: string | Buffer, name = 'in.txt', field = 'file') => {
    const form = new FormData();
    form.append(field, new Blob([typeof content === 'string' ? content : new Uint8Array(content)], { type: 'text/plain' }), name);
    return form;
  };

  describe('sizes', () => {
    it('refuses a JSON body over the limit with 413', async () => {
      await refused(
        () => t.private.post('/api/storage', { token: owner.token, json: { storage_key: unique('big'), storage_class: 'didyma.storage.FilesystemStorage', connector_init: { path: 'x', pad: 'x'.repeat(LIMITS.maxBodyBytes) } } }),
        413,
        'payload_too_large',
      );
    });

    it('refuses an upload over the limit with 413, keeps nothing of it, and gives the upload id back', async () => {
      const id = await ticket();
      await refused(() => proxyUpload(id, fileForm(Buffer.alloc(LIMITS.maxUploadBytes + 1, 7))), 413, 'payload_too_large');
      const retry = await proxyUpload(id, fileForm('small'));
      expect(retry.status, retry.text).to.equal(201);
    });

    it('refuses a declared size over the limit at request_upload with 413', async () => {
      await refused(() => t.private.post(`/api/storage/${storageKey}/files/request_upload`, { token: owner.token, json: { file_name: 'x.txt', content_type: 'text/plain', size: LIMITS.maxUploadBytes + 1 } }), 413);
    });

    it('refuses a logo over the limit with 413 and keeps no logo', async () => {
      const form = new FormData();
      form.append('logo', new Blob([new Uint8Array(LIMITS.maxLogoBytes + 1)], { type: 'image/png' }), 'logo.png');
      await refused(() => t.auth.put(`/api/auth/workspace/${owner.ws.id}/logo`, { token: owner.token, multipart: form }), 413);
      expect((await t.auth.get(`/api/auth/workspace/${owner.ws.id}/logo`, { token: owner.token })).status).to.equal(404);
    });
  });

  describe('malformed multipart', () => {
    const cases: Array<[string, string | Buffer, string?]> = [
      ['no boundary', 'anything', 'multipart/form-data'],
      ['a body that is not multipart', 'just text'],
      ['a part that never ends', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello'],
      ['headers without a body', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"'],
      ['no file part', '--XyZ\r\nContent-Disposition: form-data; name="other"\r\n\r\nvalue\r\n--XyZ--\r\n'],
      ['the file under another name', '--XyZ\r\nContent-Disposition: form-data; name="document"; filename="a.txt"\r\n\r\nhi\r\n--XyZ--\r\n'],
      ['two files', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\na\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="b.txt"\r\n\r\nb\r\n--XyZ--\r\n'],
      ['binary noise', Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919) % 256))],
      ['a JSON body', '{"file":"x"}', 'application/json'],
    ];
    for (const [name, body, type] of cases) {
      it(`refuses ${name} with 400 or 415, and the upload id stays usable`, async () => {
        const id = await ticket();
        await refused(() => proxyUpload(id, body, type), [400, 415]);
        expect((await proxyUpload(id, fileForm('fine'))).status).to.equal(201);
      });
    }

    it('refuses generated multipart garbage without a 5xx or a partial write', async () => {
      const id = await ticket();
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom('--XyZ\r\n', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="', ''), async (noise, prefix) => {
          const reply = await unchanged(() => proxyUpload(id, prefix + noise));
          expect(reply.status, reply.text).to.be.within(400, 499);
        }),
        { numRuns: 40 },
      );
      expect((await proxyUpload(id, fileForm('fine'))).status).to.equal(201);
    });
  });

  describe('path traversal in names', () => {
    const names = ['../../../../etc/passwd', '..\\..\\windows\\win.ini', '/etc/shadow', '....//....//x', '..', '.', '%2e%2e%2fx', 'a/../../b.txt', '\u202egnp.exe'];
    for (const name of names) {
      it(`stores ${JSON.stringify(name)} as a plain name inside the storage folder`, async () => {
        const id = await ticket({ file_name: name });
        const before = listFiles(t.dataDir);
        const state = await written();
        const reply = await proxyUpload(id, fileForm('payload', name));
        // Stored under a cleaned name, or (a NUL in a part header) refused as malformed, leaving nothing.
        expect([201, 400], reply.text).to.include(reply.status);
        if (reply.status === 201) {
          expect(reply.body.file_name).to.not.match(/[/\\\u202e]|^\.\.?$/);
          expect(reply.body.file_name).to.not.include('\u0000');
        } else expect(await written(), 'nothing written').to.deep.equal(state);
        const added = listFiles(t.dataDir).filter((f) => !before.includes(f));
        expect(added.every((f) => f.startsWith(path.join(t.dataDir, 'files') + path.sep)), `new files: ${added.join(', ')}`).to.equal(true);
      });
    }

    it('refuses a NUL in a file name with 400 naming the field, before anything is stored', async () => {
      const reply = await refused(() => t.private.post(`/api/storage/${storageKey}/files/request_upload`, { token: owner.token, json: { file_name: 'nul\u0000.txt', content_type: 'text/plain' } }), 400);
      expect(reply.body.details).to.deep.equal([{ field: 'file_name', message: 'must not contain NUL characters' }]);
    });

    it('refuses a storage folder outside the storage root with 400', async () => {
      for (const folder of ['../../etc', '/etc', '..', 'a/../../b']) {
        await refused(
          () => t.private.post('/api/storage', { token: owner.token, json: { storage_key: unique('trav'), storage_class: 'didyma.storage.FilesystemStorage', connector_init: { path: folder } } }),
          400,
        );
      }
    });

    it('answers a traversal in a path parameter with 400 or 404', async () => {
      for (const key of ['..', '..%2F..%2Fetc', '%2e%2e', 'a%00b']) {
        await refused(() => t.private.get(`/api/storage/${key}`, { token: owner.token }), [400, 404]);
      }
    });

    it('answers dot segments sent as written (not removed by the client) with 400 or 404', async () => {
      for (const key of ['.', '..', '%2E', '%2e%2E', '..%2F..']) {
        await refused(() => getAsIs(t.private.baseUrl, `/api/storage/${key}`, owner.token), [400, 404]);
        await refused(() => getAsIs(t.private.baseUrl, `/api/storage/${key}/files/x`, owner.token), [400, 404]);
        await refused(() => getAsIs(t.auth.baseUrl, `/api/auth/invitation/${key}`), [400, 404]);
      }
    });
  });

  describe('deeply nested JSON', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    it('refuses a request body nested deeper than the limit with 400', async () => {
      for (const depth of [101, 5_000, 30_000]) {
        await refused(
          () => t.private.request('POST', '/api/storage', { token: owner.token, rawBody: `{"storage_key":"deep","storage_class":"x","connector_init":{"a":${nested(depth)}}}`, headers: { 'content-type': 'application/json' } }),
          400,
          'validation_error',
        );
      }
    });

    it('still accepts nesting within the limit (refused for its content, not its depth)', async () => {
      const reply = await refused(() => t.private.request('POST', '/api/storage', { token: owner.token, rawBody: `{"storage_key":"deep","storage_class":"x","connector_init":{"a":${nested(90)}}}`, headers: { 'content-type': 'application/json' } }), 400);
      expect(reply.body.message).to.not.match(/nested/);
    });

    it('refuses deeply nested JSON text inside an invocation or feedback body with 400', async () => {
      const base = `/api/model/iris-classifier/version/${version}/session/${session}`;
      const deep = nested(20_000); // within the body limit, far past the depth limit
      await refused(() => t.public.post(`${base}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: deep } } }), 400);
      const first = await t.public.post(`${base}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      expect(first.status).to.equal(201);
      const objects = '{"notes":'.repeat(5_000) + '1' + '}'.repeat(5_000);
      await refused(() => t.public.post(`${base}/invocation/${first.body.id}/feedback`, { token: owner.token, json: { request: { body: objects } } }), 400);
    });
  });

  describe('hostile schemas', () => {
    const register = (extra: Record<string, unknown>, code = 'iris-explainer') => () => t.private.post('/api/platform_model', { token: owner.token, json: modelPayload(code, version, demoCard, extra) });
    let demoCard: string;
    let costly: string;
    before(async () => {
      demoCard = (await upload(t.private, owner.token, storageKey, 'card')).file_id;
      // Within every limit, yet tens of milliseconds per 100 bytes of a string: past the deadline well inside the body limit.
      const registered = await register({ input_schema: { type: 'json', schema: COSTLY_PER_BYTE }, feedback_schema: COSTLY_PER_BYTE })();
      expect(registered.status, registered.text).to.equal(201);
      costly = `/api/model/iris-explainer/version/${version}/session/${(await t.public.post(`/api/model/iris-explainer/version/${version}/session`, { token: owner.token })).body.id}`;
    });

    it('refuses schemas that refer to themselves or expand past the limit with 400 naming the cycle or the limit', async () => {
      const json = (schema: object) => ({ type: 'json', schema });
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ input_schema: json(SELF_REFERENCE) }, /^input_schema\.schema: its references form a cycle, # → #;/],
        [{ output_schema: json(TWO_CYCLE) }, /^output_schema\.schema: its references form a cycle, #\/\$defs\/a → #\/\$defs\/b → #\/\$defs\/a;/],
        [{ feedback_schema: TWO_CYCLE }, /^feedback_schema: its references form a cycle/],
        [{ input_schema: json(doublingSchema(13)) }, /^input_schema\.schema: the schema expands to more than 10000 subschemas/],
        [{ feedback_schema: doublingSchema(40) }, /^feedback_schema: the schema expands to more than 10000 subschemas/],
      ];
      for (const [extra, message] of cases) {
        const reply = await refused(register(extra, 'iris-classifier'), 400, 'validation_error');
        expect(reply.body.message).to.match(message);
      }
    });

    it('refuses with 400 an invocation or a feedback whose validation runs past the deadline', async () => {
      const slow = JSON.stringify('abc'.repeat(10_000)); // within the body limit; seconds of pattern matching
      const first = await t.public.post(`${costly}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: '"abc"' } } });
      expect(first.status, first.text).to.equal(201);
      for (const act of [
        () => t.public.post(`${costly}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: slow } } }),
        () => t.public.post(`${costly}/invocation/${first.body.id}/feedback`, { token: owner.token, json: { request: { body: slow } } }),
      ]) {
        const reply = await refused(act, 400, 'validation_error');
        expect(reply.body.message).to.equal("request.body: validation against the model's schema took longer than 1000 ms; nothing was recorded.");
      }
    });
  });

  describe('unicode edge cases in names', () => {
    const names = ['Ünïcode', 'e\u0301', 'ws\u0000x', 'rtl\u202eabc', 'zero\u200bwidth', '😀', 'ＡＢＣ', 'ﬁ', 'tab\tname', 'a'.repeat(300), ' lead', 'trail ', 'İstanbul', 'ß', '\ud800', ''];
    it('refuses such workspace names with 400 (staff) and creates nothing', async () => {
      for (const name of [...names, 'UPPER']) await refused(() => t.auth.post('/api/auth/workspace', { token: staffToken, json: { name } }), 400);
    });
    it('refuses such storage keys, deployment keys and model codes with 400 and creates nothing', async () => {
      for (const name of names) {
        await refused(() => t.private.post('/api/storage', { token: owner.token, json: { storage_key: name, storage_class: 'didyma.storage.FilesystemStorage', connector_init: { path: 'u' } } }), 400);
        await refused(
          () =>
            t.private.post('/api/deployment', {
              token: owner.token,
              json: {
                deployment_key: name,
                registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
                registry_connector_init: { model_registry_url: demo.url, tracking_server_url: demo.url },
                server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
                server_proxy_init: { server_proxy_url: demo.url },
              },
            }),
          400,
        );
        await refused(() => t.private.post('/api/platform_model', { token: owner.token, json: modelPayload(name, version, '00000000-0000-4000-8000-000000000000') }), 400);
      }
    });
    it('keeps unicode file names, normalised, and answers them back', async () => {
      for (const name of ['café.txt', 'cafe\u0301.txt', '数据.csv', '😀.txt', 'ＡＢＣ.txt']) {
        const id = await ticket({ file_name: name });
        const reply = await proxyUpload(id, fileForm('x', name));
        expect(reply.status, reply.text).to.equal(201);
        expect(reply.body.file_name).to.equal(name.normalize('NFC'));
      }
    });
  });
});

function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(full);
    }
  };
  walk(root);
  return out.sort();
}
