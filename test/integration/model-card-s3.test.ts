import { expect } from 'chai';
import * as Minio from 'minio';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { demoDeployment, modelPayload, startDemoModelServer, tenant, upload } from '../support/fixtures.js';
import { requireEnv } from '../support/services.js';

/** The full model-card flow on a real MinIO: S3 storage configuration, upload, registration, download. */
describe('model cards on S3Storage (real MinIO)', function () {
  this.timeout(60_000);
  let t: TestPlatform;
  let endpoint: string;
  let accessKey: string;
  let secretKey: string;
  let bucket: string;
  let client: Minio.Client;

  before(async () => {
    endpoint = requireEnv('TEST_S3_ENDPOINT', 'minio');
    accessKey = requireEnv('TEST_S3_ACCESS_KEY', 'minio');
    secretKey = requireEnv('TEST_S3_SECRET_KEY', 'minio');
    const url = new URL(endpoint);
    client = new Minio.Client({ endPoint: url.hostname, port: Number(url.port), useSSL: false, accessKey, secretKey });
    bucket = unique('cards').toLowerCase();
    await client.makeBucket(bucket);
    t = await startTestPlatform();
  });
  after(async () => {
    await t?.close();
  });

  it('stores the card in the bucket, registers the model with it, and serves it to members', async () => {
    const a = await tenant(t);
    const created = await t.private.post('/api/storage', {
      token: a.token,
      json: { storage_key: 's3', storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: accessKey, secret_key: secretKey, endpoint, bucket_name: bucket } },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.connector_init.secret_key).to.equal('********');
    expect(created.body.connector_init.access_key, 'the access key is a credential too').to.equal('********');
    for (const path of ['/api/storage', '/api/storage/s3']) expect((await t.private.get(path, { token: a.token })).text).to.not.include(secretKey);
    const row = await t.platform.db('storage_configs').where({ workspace_id: a.ws.id, storage_key: 's3' }).first();
    expect(JSON.stringify(row)).to.not.include(secretKey);
    expect(row.connector_init).to.not.have.property('access_key');

    const content = `# Iris model card\n${'detail '.repeat(5000)}`;
    const card = await upload(t.private, a.token, 's3', content, 'iris-card.md', 'text/markdown');
    const objects: string[] = [];
    for await (const item of client.listObjectsV2(bucket, '', true)) objects.push((item as { name: string }).name);
    expect(objects).to.deep.equal([`workspace/${a.ws.id}/files/${card.file_id}`]);

    const version = unique('v');
    const demo = await startDemoModelServer(version);
    try {
      await demoDeployment(t.private, a.token, demo.url);
      const registered = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card.file_id) });
      expect(registered.status, registered.text).to.equal(201);
      const download = await t.public.get(`/api/platform_model/iris-classifier/version/${version}/model_card`, { token: a.token });
      expect(download.status).to.equal(200);
      expect(download.text).to.equal(content);
      expect(download.headers.get('content-type')).to.match(/^text\/markdown/);
      expect(download.headers.get('content-disposition')).to.include('iris-card.md');
    } finally {
      await demo.close();
    }
  });

  it('refuses a configuration whose credentials do not open the bucket, without echoing them', async () => {
    const a = await tenant(t);
    const reply = await t.private.post('/api/storage', {
      token: a.token,
      json: { storage_key: 'bad', storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: accessKey, secret_key: 'wrong-secret-value', endpoint, bucket_name: bucket } },
    });
    expect(reply.status).to.equal(400);
    expect(reply.body.message).to.include(bucket);
    expect(reply.text).to.not.include('wrong-secret-value');
  });
});
