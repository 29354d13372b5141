import { expect } from 'chai';
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { Client } from 'minio';
import { BadGatewayError, InputError, NotFoundError, PayloadTooLargeError } from '../../kernel/errors/errors.js';
import { collect } from '../../infra/http/multipart.js';
import type { StorageBackend } from '../../infra/storage/backend.js';
import { S3_STORAGE, StorageClasses } from '../../infra/storage/classes.js';
import { parseEndpoint } from '../../infra/storage/s3-endpoint.js';
import { requireEnv } from '../support/services.js';

// Runs against a real MinIO server: `bash scripts/services/minio.sh start`,
// then `eval "$(bash scripts/services/minio.sh env)"` sets TEST_S3_ENDPOINT,
// TEST_S3_ACCESS_KEY and TEST_S3_SECRET_KEY. Without them the suite fails.

const MIB = 1024 * 1024;

interface S3Server {
  endpoint: string;
  accessKey: string;
  secretKey: string;
}

function s3ServerFromEnvironment(): S3Server {
  return {
    endpoint: requireEnv('TEST_S3_ENDPOINT', 'minio'),
    accessKey: requireEnv('TEST_S3_ACCESS_KEY', 'minio'),
    secretKey: requireEnv('TEST_S3_SECRET_KEY', 'minio'),
  };
}

function adminClient(server: S3Server): Client {
  const endpoint = parseEndpoint(server.endpoint, undefined);
  return new Client({ endPoint: endpoint.host, port: endpoint.port, useSSL: endpoint.useSSL, accessKey: server.accessKey, secretKey: server.secretKey });
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `total` bytes in 64 KiB chunks of varying content, produced on demand. */
function generated(total: number): Readable {
  return Readable.from(
    (function* () {
      for (let offset = 0, index = 0; offset < total; offset += 64 * 1024, index += 1) {
        yield Buffer.alloc(Math.min(64 * 1024, total - offset), index % 251);
      }
    })(),
  );
}

/** Fails after `bytes` bytes, like a client that disconnects mid-upload. */
function failingAfter(bytes: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= bytes) {
        this.destroy(new Error('client went away'));
        return;
      }
      sent += 64 * 1024;
      this.push(Buffer.alloc(64 * 1024, 3));
    },
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

async function expectRejection<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(type);
    return error as E;
  }
  throw new Error(`expected a rejection with ${type.name}`);
}

describe('S3Storage against a real MinIO server', () => {
  let server: S3Server;
  let admin: Client;
  let bucket: string;
  let storage: StorageBackend;
  const classes = new StorageClasses();

  const initFor = (overrides: Record<string, unknown> = {}) => ({
    access_key: server.accessKey,
    secret_key: server.secretKey,
    endpoint: server.endpoint,
    bucket_name: bucket,
    ...overrides,
  });

  async function objectNames(): Promise<string[]> {
    const names: string[] = [];
    for await (const item of admin.listObjectsV2(bucket, '', true)) names.push((item as { name: string }).name);
    return names;
  }

  async function incompleteUploads(): Promise<string[]> {
    const keys: string[] = [];
    for await (const upload of admin.listIncompleteUploads(bucket, '', true)) keys.push((upload as { key: string }).key);
    return keys;
  }

  before(async () => {
    server = s3ServerFromEnvironment();
    admin = adminClient(server);
    bucket = `didyma-test-${randomUUID().slice(0, 8)}`;
    await admin.makeBucket(bucket);
    storage = classes.backend(S3_STORAGE, initFor());
  });

  after(async () => {
    if (!admin || !bucket) return;
    for (const key of await incompleteUploads()) await admin.removeIncompleteUpload(bucket, key);
    for (const name of await objectNames()) await admin.removeObject(bucket, name);
    await admin.removeBucket(bucket);
  });

  it('passes check() for a reachable bucket with valid credentials, and fails it once that bucket is gone', async () => {
    expect(await storage.check().then(() => 'reachable', (e: unknown) => e)).to.equal('reachable');
    // The same check against a bucket of its own, removed: it asked the server about that bucket.
    const gone = `didyma-test-${randomUUID().slice(0, 8)}`;
    await admin.makeBucket(gone);
    const checked = classes.backend(S3_STORAGE, initFor({ bucket_name: gone }));
    expect(await checked.check().then(() => 'reachable', (e: unknown) => e)).to.equal('reachable');
    await admin.removeBucket(gone);
    const error = await expectRejection(checked.check(), InputError);
    expect(error.message).to.equal(`bucket ${gone} not reachable at endpoint ${parseEndpoint(server.endpoint, undefined).origin}: the bucket does not exist.`);
  });

  it('stores a small file in one request and serves it back with size, SHA-256 and content type', async () => {
    const key = `workspace/1/files/${randomUUID()}`;
    const data = Buffer.from('model card: a model that predicts things\n'.repeat(100));
    const stored = await storage.put(key, Readable.from([data]), { contentType: 'text/markdown; charset=utf-8', maxBytes: MIB });
    expect(stored).to.deep.equal({ size: data.length, sha256: sha256(data) });

    const download = await storage.get(key);
    expect(download.size).to.equal(data.length);
    expect(download.contentType).to.equal('text/markdown; charset=utf-8');
    expect(await collect(download.stream)).to.deep.equal(data);
  });

  it('streams a file larger than one part through a multipart upload', async () => {
    const key = `workspace/1/files/${randomUUID()}`;
    const size = 19 * MIB + 12345;
    const expected = await collect(generated(size));
    const stored = await storage.put(key, generated(size), { contentType: 'application/zip', maxBytes: 50 * MIB });
    expect(stored).to.deep.equal({ size, sha256: sha256(expected) });

    const download = await storage.get(key);
    expect(download).to.include({ size, contentType: 'application/zip' });
    expect(sha256(await collect(download.stream))).to.equal(stored.sha256);
  });

  it('stores an empty file', async () => {
    const key = `workspace/1/files/${randomUUID()}`;
    expect(await storage.put(key, Readable.from([]), { contentType: 'text/plain', maxBytes: 10 })).to.deep.equal({ size: 0, sha256: sha256(Buffer.alloc(0)) });
    expect((await storage.get(key)).size).to.equal(0);
  });

  it('removes a file: reading it is then a 404, removing it again is fine', async () => {
    const key = `workspace/1/files/${randomUUID()}`;
    await storage.put(key, Readable.from([Buffer.from('bye')]), { contentType: 'text/plain', maxBytes: 10 });
    await storage.remove(key);
    await storage.remove(key);
    await expectRejection(storage.get(key), NotFoundError);
    expect(await objectNames()).to.not.include(key);
  });

  it('answers 404 for a key that was never stored', async () => {
    await expectRejection(storage.get(`workspace/1/files/${randomUUID()}`), NotFoundError);
  });

  it('aborts a small upload over the limit and stores nothing', async () => {
    const key = `workspace/1/files/${randomUUID()}`;
    const error = await expectRejection(storage.put(key, generated(5000), { contentType: 'text/plain', maxBytes: 1000 }), PayloadTooLargeError);
    expect(error.message).to.equal('The file is larger than 1000 bytes.');
    expect(await objectNames()).to.not.include(key);
  });

  it('aborts a multipart upload over the limit, after parts were sent, and leaves no object or upload', async () => {
    const key = `workspace/1/files/${randomUUID()}`;
    const source = generated(40 * MIB);
    await expectRejection(storage.put(key, source, { contentType: 'application/zip', maxBytes: 20 * MIB }), PayloadTooLargeError);
    expect(source.destroyed, 'the source stream is destroyed, not read to its end').to.equal(true);
    expect(await objectNames()).to.not.include(key);
    expect(await incompleteUploads(), 'incomplete multipart uploads').to.deep.equal([]);
  });

  it('aborts when the source stream fails half-way through a multipart upload', async () => {
    const key = `workspace/1/files/${randomUUID()}`;
    const error = await expectRejection(storage.put(key, failingAfter(12 * MIB), { contentType: 'application/zip', maxBytes: 50 * MIB }), Error);
    expect(error.message).to.equal('client went away');
    expect(await objectNames()).to.not.include(key);
    expect(await incompleteUploads(), 'incomplete multipart uploads').to.deep.equal([]);
  });

  it('refuses keys that try to leave the prefix', async () => {
    for (const key of ['../other', 'workspace/1/../2/files/x', '/root', 'a\\b']) {
      await expectRejection(storage.put(key, Readable.from([Buffer.from('x')]), { contentType: 'text/plain', maxBytes: 10 }), InputError);
      await expectRejection(storage.get(key), InputError);
    }
  });

  it('reports a backend failure during an upload as a 502 without the secret', async () => {
    const broken = classes.backend(S3_STORAGE, initFor({ bucket_name: `didyma-missing-${randomUUID().slice(0, 8)}` }));
    const error = await expectRejection(broken.put(`workspace/1/files/${randomUUID()}`, generated(100), { contentType: 'text/plain', maxBytes: 1000 }), BadGatewayError);
    expect(error.status).to.equal(502);
    expect(error.message).to.equal('The storage backend failed: the bucket does not exist.');
  });

  describe('check() explains what is wrong, as a 400 without the secret', () => {
    async function checkFailure(overrides: Record<string, unknown>): Promise<InputError> {
      const error = await expectRejection(classes.backend(S3_STORAGE, initFor(overrides)).check(), InputError);
      expect(error.status).to.equal(400);
      return error;
    }

    it('for a wrong secret key', async () => {
      const wrongSecret = `wrong-${randomUUID()}`;
      const error = await checkFailure({ secret_key: wrongSecret });
      expect(error.message).to.equal(
        `bucket ${bucket} not reachable at endpoint ${parseEndpoint(server.endpoint, undefined).origin}: the secret key does not match the access key.`,
      );
      expect(JSON.stringify({ message: error.message, details: error.details })).to.not.include(wrongSecret);
    });

    it('for an unknown access key', async () => {
      const error = await checkFailure({ access_key: `nobody-${randomUUID().slice(0, 8)}` });
      expect(error.message).to.match(/^bucket \S+ not reachable at endpoint \S+: the access key is not known to the server\.$/);
    });

    it('for a missing bucket', async () => {
      const missing = `didyma-missing-${randomUUID().slice(0, 8)}`;
      const error = await checkFailure({ bucket_name: missing });
      expect(error.message).to.match(new RegExp(`^bucket ${missing} not reachable at endpoint \\S+: the bucket does not exist\\.$`));
    });

    it('for an endpoint where nothing listens', async () => {
      const port = await freePort();
      const error = await checkFailure({ endpoint: `http://127.0.0.1:${port}` });
      expect(error.message).to.equal(`bucket ${bucket} not reachable at endpoint http://127.0.0.1:${port}: the endpoint could not be reached.`);
    });
  });
});
