import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { FILESYSTEM_STORAGE, colleague, filesystemStorage, tenant, upload } from '../../test/support/fixtures.js';

describe('private server: storage configurations and uploads', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
  });
  after(() => t.close());

  it('registers, lists, reads and de-registers a storage configuration', async () => {
    const a = await tenant(t);
    const key = await filesystemStorage(t.private, a.token);
    const list = await t.private.get('/api/storage', { token: a.token });
    expect(list.status).to.equal(200);
    expect(list.body).to.deep.equal([{ storage_key: key, storage_class: FILESYSTEM_STORAGE, workspace: a.ws.name }]);
    const one = await t.private.get(`/api/storage/${key}`, { token: a.token });
    expect(one.body).to.deep.equal({ storage_key: key, storage_class: FILESYSTEM_STORAGE, connector_init: { path: key }, workspace: a.ws.name });
    expect((await t.private.post('/api/storage', { token: a.token, json: { storage_key: key, storage_class: FILESYSTEM_STORAGE, connector_init: { path: 'x' } } })).status).to.equal(409);
    expect((await t.private.delete(`/api/storage/${key}`, { token: a.token })).status).to.equal(204);
    expect((await t.private.get(`/api/storage/${key}`, { token: a.token })).status).to.equal(404);
  });

  it('explains bad classes and init objects with 400', async () => {
    const a = await tenant(t);
    const unknown = await t.private.post('/api/storage', { token: a.token, json: { storage_key: 'x', storage_class: 'os.system', connector_init: {} } });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.message).to.include('didyma.storage.S3Storage');
    const missing = await t.private.post('/api/storage', { token: a.token, json: { storage_key: 'x', storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: 'a', secret_key: 'b', endpoint: 'http://127.0.0.1:1' } } });
    expect(missing.status).to.equal(400);
    expect(missing.body.message).to.include('bucket_name');
    const traversal = await t.private.post('/api/storage', { token: a.token, json: { storage_key: 'x', storage_class: FILESYSTEM_STORAGE, connector_init: { path: '../../etc' } } });
    expect(traversal.status).to.equal(400);
  });

  it('refuses a filesystem path under a symbolic link out of the storage root with 400, creating nothing outside', async () => {
    const a = await tenant(t);
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-outside-'));
    try {
      const link = unique('link');
      fs.mkdirSync(path.join(t.dataDir, 'files'), { recursive: true });
      fs.symlinkSync(outside, path.join(t.dataDir, 'files', link));
      const reply = await t.private.post('/api/storage', { token: a.token, json: { storage_key: unique('fs'), storage_class: FILESYSTEM_STORAGE, connector_init: { path: `${link}/team/files` } } });
      expect(reply.status).to.equal(400);
      expect(reply.body.message).to.equal(`connector_init.path "${link}/team/files" leads outside the storage root through a symbolic link.`);
      expect(reply.body.details).to.deep.equal([{ field: 'connector_init.path', message: 'leads outside the storage root through a symbolic link' }]);
      expect(fs.readdirSync(outside, { recursive: true }), 'made outside the root').to.deep.equal([]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('refuses S3 configurations whose bucket cannot be reached, without echoing the secret', async () => {
    const a = await tenant(t);
    const secret = `s3cr3t-${crypto.randomUUID()}`;
    const reply = await t.private.post('/api/storage', {
      token: a.token,
      json: { storage_key: 'remote', storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: 'ak', secret_key: secret, endpoint: 'http://127.0.0.1:9', bucket_name: 'b' } },
    });
    expect(reply.status).to.equal(400);
    expect(reply.text).to.not.include(secret);
  });

  it('uploads through request_upload and proxy_upload, records size and SHA-256, and serves the file back', async () => {
    const a = await tenant(t);
    const key = await filesystemStorage(t.private, a.token);
    const content = `# Model card\n${'x'.repeat(10_000)}`;
    const stored = await upload(t.private, a.token, key, content);
    expect(stored.sha256).to.equal(crypto.createHash('sha256').update(content).digest('hex'));
    expect(stored.size).to.equal(Buffer.byteLength(content));
    const download = await fetch(`${t.private.baseUrl}/api/storage/${key}/files/${stored.file_id}`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-type')).to.match(/^text\/markdown/);
    expect(download.headers.get('content-disposition')).to.include('card.md');
    expect(await download.text()).to.equal(content);
  });

  it('makes upload ids single-use and keeps them for a retry after a failed transfer', async () => {
    const a = await tenant(t);
    const key = await filesystemStorage(t.private, a.token);
    const ticket = await t.private.post(`/api/storage/${key}/files/request_upload`, { token: a.token, json: { file_name: 'a.txt', content_type: 'text/plain', size: 10 } });
    const path = `/api/storage/${key}/files/proxy_upload/${ticket.body.upload_id}`;
    const form = (text: string) => {
      const f = new FormData();
      f.append('file', new Blob([text], { type: 'text/plain' }), 'a.txt');
      return f;
    };
    const tooBig = await t.private.post(path, { token: a.token, multipart: form('more than ten bytes') });
    expect(tooBig.status).to.equal(413);
    const ok = await t.private.post(path, { token: a.token, multipart: form('ten bytes!') });
    expect(ok.status).to.equal(201);
    const again = await t.private.post(path, { token: a.token, multipart: form('ten bytes!') });
    expect(again.status).to.equal(409);
  });

  it('refuses unaccepted media types, malformed multipart and expired upload ids', async () => {
    const a = await tenant(t);
    const key = await filesystemStorage(t.private, a.token);
    const exe = await t.private.post(`/api/storage/${key}/files/request_upload`, { token: a.token, json: { file_name: 'x.exe', content_type: 'application/x-msdownload' } });
    expect(exe.status).to.equal(415);
    const ticket = await t.private.post(`/api/storage/${key}/files/request_upload`, { token: a.token, json: { file_name: '../../etc/passwd' } });
    const path = `/api/storage/${key}/files/proxy_upload/${ticket.body.upload_id}`;
    const broken = await t.private.post(path, { token: a.token, rawBody: '--x\r\nnot multipart', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    expect(broken.status).to.equal(400);
    const f = new FormData();
    f.append('file', new Blob(['<html>'], { type: 'text/html' }), 'page.html');
    expect((await t.private.post(path, { token: a.token, multipart: f })).status).to.equal(415);
    const g = new FormData();
    g.append('file', new Blob(['hello'], { type: 'text/plain' }), 'p.txt');
    const stored = await t.private.post(path, { token: a.token, multipart: g });
    expect(stored.status).to.equal(201);
    expect(stored.body.file_name).to.equal('passwd');

    const late = await t.private.post(`/api/storage/${key}/files/request_upload`, { token: a.token, json: { file_name: 'late.txt' } });
    await t.platform.db('uploads').where({ id: late.body.upload_id }).update({ expires_at: new Date(Date.now() - 1000) });
    expect((await t.private.post(`/api/storage/${key}/files/proxy_upload/${late.body.upload_id}`, { token: a.token, multipart: g })).status).to.equal(410);
  });

  it('stops uploads to a de-registered storage but keeps its files readable', async () => {
    const a = await tenant(t);
    const key = await filesystemStorage(t.private, a.token);
    const stored = await upload(t.private, a.token, key, 'kept');
    await t.private.delete(`/api/storage/${key}`, { token: a.token });
    expect((await t.private.post(`/api/storage/${key}/files/request_upload`, { token: a.token, json: { file_name: 'n.txt' } })).status).to.equal(404);
    const download = await t.private.get(`/api/storage/${key}/files/${stored.file_id}`, { token: a.token });
    expect(download.status).to.equal(200);
    expect(download.text).to.equal('kept');
  });

  it('keeps storage to supervisors on the private server and to the own workspace everywhere', async () => {
    const a = await tenant(t);
    const key = await filesystemStorage(t.private, a.token);
    const stored = await upload(t.private, a.token, key, 'secret plans');
    const member = await colleague(t, a, 'user');
    expect((await t.private.get('/api/storage', { token: member.token })).status).to.equal(403);
    expect((await t.private.post(`/api/storage/${key}/files/request_upload`, { token: member.token, json: { file_name: 'x.txt' } })).status).to.equal(403);
    const viaPublic = await upload(t.public, member.token, key, 'input data', 'input.csv', 'text/csv');
    expect(viaPublic.file_id).to.be.a('string');
    expect((await t.public.get(`/api/storage/${key}/files/${stored.file_id}`, { token: member.token })).status).to.equal(200);

    const b = await tenant(t);
    expect((await t.private.get(`/api/storage/${key}`, { token: b.token })).status).to.equal(404);
    expect((await t.private.get(`/api/storage/${key}/files/${stored.file_id}`, { token: b.token })).status).to.equal(404);
    expect((await t.public.get(`/api/storage/${key}/files/${stored.file_id}`, { token: b.token })).status).to.equal(404);
    expect((await t.private.delete(`/api/storage/${key}`, { token: b.token })).status).to.equal(404);
    expect(unique('x')).to.be.a('string');
  });
});
