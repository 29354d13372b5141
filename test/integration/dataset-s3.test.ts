import { createHash } from 'node:crypto';
import { expect } from 'chai';
import * as Minio from 'minio';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload } from '../support/fixtures.js';
import { requireEnv } from '../support/services.js';
import { startExecutor } from '../../executor/start.js';

/** A closed session exported as a dataset into an S3Storage configuration on a real MinIO. */
describe('datasets on S3Storage (real MinIO)', function () {
  this.timeout(120_000);
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let client: Minio.Client;
  let bucket: string;
  let s3Init: Record<string, string>;

  before(async () => {
    const endpoint = requireEnv('TEST_S3_ENDPOINT', 'minio');
    const accessKey = requireEnv('TEST_S3_ACCESS_KEY', 'minio');
    const secretKey = requireEnv('TEST_S3_SECRET_KEY', 'minio');
    const url = new URL(endpoint);
    client = new Minio.Client({ endPoint: url.hostname, port: Number(url.port), useSSL: false, accessKey, secretKey });
    bucket = unique('datasets').toLowerCase();
    await client.makeBucket(bucket);
    s3Init = { access_key: accessKey, secret_key: secretKey, endpoint, bucket_name: bucket };
    t = await startTestPlatform();
    executor = await startExecutor(t.platform);
  });
  after(async () => {
    await executor?.close();
    await t?.close();
  });

  async function objectText(key: string): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of await client.getObject(bucket, key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  it('writes the records and the manifest into the bucket and serves them back unchanged', async () => {
    const a = await tenant(t);
    expect((await t.private.post('/api/storage', { token: a.token, json: { storage_key: 's3', storage_class: 'didyma.storage.S3Storage', connector_init: s3Init } })).status).to.equal(201);
    const version = unique('v');
    const demo = await startDemoModelServer(version);
    try {
      await demoDeployment(t.private, a.token, demo.url);
      const card = await upload(t.private, a.token, await filesystemStorage(t.private, a.token), '# Iris');
      expect((await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card.file_id) })).status).to.equal(201);
      const base = `/api/model/iris-classifier/version/${version}`;
      const session = (await t.public.post(`${base}/session`, { token: a.token })).body.id as string;
      const created = await t.public.post(`${base}/session/${session}/invocation`, { token: a.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      for (let i = 0; i < 400; i++) {
        const { body } = await t.public.get(`${base}/session/${session}/invocation/${created.body.id}`, { token: a.token });
        if (body.status === 'COMPLETED') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await t.public.patch(`${base}/session/${session}?state=CLOSED`, { token: a.token });

      const exported = await t.public.post(`${base}/session/${session}/dataset`, { token: a.token, json: { storage_key: 's3' } });
      expect(exported.status, exported.text).to.equal(201);
      const prefix = `workspace/${a.ws.id}/datasets/${exported.body.id}/`;
      const objects: string[] = [];
      for await (const item of client.listObjectsV2(bucket, prefix, true)) objects.push((item as { name: string }).name);
      expect(objects.sort()).to.deep.equal([`${prefix}manifest.json`, `${prefix}records.jsonl`, `${prefix}table.jsonl`]);

      const stored = await objectText(`${prefix}records.jsonl`);
      expect(createHash('sha256').update(stored).digest('hex')).to.equal(exported.body.sha256);
      expect(JSON.parse(stored.trim())).to.include({ invocation_id: created.body.id, status: 'COMPLETED' });
      expect(JSON.parse(await objectText(`${prefix}manifest.json`))).to.deep.include({ row_count: 1, sha256: exported.body.sha256 });
      expect((await t.public.get(`/api/dataset/${exported.body.id}/records`, { token: a.token })).text).to.equal(stored);
    } finally {
      await demo.close();
    }
  });
});
