import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, OPEN_INFERENCE_PROXY, OPEN_INFERENCE_REGISTRY } from '../../test/support/fixtures.js';
import { startSilentServer, type SilentServer } from '../../test/support/silent-server.js';
import { until } from '../../test/support/until.js';

// A supervisor points a storage configuration or a deployment at a peer that
// accepts TCP connections and never answers: each call gives up at its
// configured timeout with a clear error, and closes its socket, so such a peer
// can neither hold a request forever nor pile up connections in the process.

const STORAGE_HEADERS_TIMEOUT_MS = 400;
const UPSTREAM_TIMEOUT_MS = 400;

describe('private and public servers: peers that accept connections and never answer', () => {
  let t: TestPlatform;
  let silent: SilentServer;

  before(async () => {
    t = await startTestPlatform({ storageHeadersTimeoutMs: STORAGE_HEADERS_TIMEOUT_MS, upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS, executorRetryBackoffMs: 10 });
    silent = await startSilentServer();
    // The S3 client library loads with the first S3 storage: loaded here, it is not timed with the answer.
    await import('minio');
  });
  after(async () => {
    await t.close();
    await silent.close();
  });

  const noSocketLeft = () => until(async () => (await silent.connections()) === 0, 'every connection to the silent peer to close', 2_000);

  it('answers an S3 storage registration 400 within the storage headers timeout, and leaves no socket open', async () => {
    const a = await tenant(t);
    const accepted = silent.accepted();
    const started = Date.now();
    const reply = await t.private.post('/api/storage', {
      token: a.token,
      json: { storage_key: unique('s3'), storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: 'ak', secret_key: 'sk-secret', endpoint: silent.url, bucket_name: 'files' } },
    });
    const took = Date.now() - started;
    await accepted;
    expect(reply.status).to.equal(400);
    expect(reply.body.message).to.equal(`bucket files not reachable at endpoint ${silent.url}: the endpoint could not be reached.`);
    expect(took, 'milliseconds to the answer').to.be.within(STORAGE_HEADERS_TIMEOUT_MS, STORAGE_HEADERS_TIMEOUT_MS + 1_500);
    await noSocketLeft();
  });

  it('answers a model registration through a registry that never answers 502 within its attempts, and leaves no socket open', async () => {
    const a = await tenant(t);
    const key = unique('silent');
    const deployment = await t.private.post('/api/deployment', {
      token: a.token,
      json: {
        deployment_key: key,
        registry_connector_class: OPEN_INFERENCE_REGISTRY,
        registry_connector_init: { model_registry_url: silent.url },
        server_proxy_class: OPEN_INFERENCE_PROXY,
        server_proxy_init: { server_proxy_url: silent.url },
      },
    });
    expect(deployment.status, deployment.text).to.equal(201);
    const card = await upload(t.private, a.token, await filesystemStorage(t.private, a.token), '# card');
    const started = Date.now();
    const reply = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', unique('v'), card.file_id) });
    const took = Date.now() - started;
    expect(reply.status).to.equal(502);
    expect(reply.body.message).to.equal(`Deployment "${key}": the model registry could not be reached.`);
    // A lookup is a GET: the client tries it three times, each within the timeout, with a short backoff between.
    expect(took, 'milliseconds to the answer').to.be.within(UPSTREAM_TIMEOUT_MS, 3 * UPSTREAM_TIMEOUT_MS + 2_000);
    await noSocketLeft();
  });

  it('fails an invocation whose model server never answers, each attempt within the timeout, and leaves no socket open', async () => {
    const executor = await startExecutor(t.platform);
    const version = unique('v');
    const demo = await startDemoModelServer(version);
    try {
      const a = await tenant(t);
      // The registry answers (the demo server); the model server is the silent peer.
      await demoDeployment(t.private, a.token, demo.url, unique('mute'), {}, silent.url);
      const card = await upload(t.private, a.token, await filesystemStorage(t.private, a.token), '# card');
      const registered = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card.file_id) });
      expect(registered.status, registered.text).to.equal(201);
      const base = `/api/model/iris-classifier/version/${version}/session`;
      const session = (await t.public.post(base, { token: a.token })).body.id as string;
      const created = await t.public.post(`${base}/${session}/invocation`, { token: a.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
      expect(created.status, created.text).to.equal(201);
      let last: { status: string; error?: string } = { status: 'QUEUED' };
      await until(
        async () => {
          last = (await t.public.get(`${base}/${session}/invocation/${created.body.id}`, { token: a.token })).body;
          return last.status === 'ERROR';
        },
        'the invocation to fail',
        30_000,
      );
      expect(last.error).to.match(/the model server could not be reached/);
      await noSocketLeft();
    } finally {
      await executor.close();
      await demo.close();
    }
  });
});
