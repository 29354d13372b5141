import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { filesystemStorage, modelPayload, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import { startOwnService, type OwnService } from '../../test/support/own-service.js';

// What a supervisor learns by pointing a deployment or a storage configuration at
// an address the outbound policy refuses: that it is refused, never whether it answered.

describe('private server: outbound calls to private and platform addresses', () => {
  let t: TestPlatform;
  let own: OwnService;

  before(async () => {
    // Stands for one of the platform's own services (here its Prometheus), on loopback as in `didyma dev`.
    own = await startOwnService();
    t = await startTestPlatform({ prometheusUrl: own.url });
  });
  after(async () => {
    await t.close();
    await own.close();
  });

  const deployment = (url: string) => ({
    deployment_key: unique('egress'),
    registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
    registry_connector_init: { model_registry_url: url },
    server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
    server_proxy_init: { server_proxy_url: url },
  });

  /** Registers a deployment at `url` in a fresh workspace, then a model through it: the registration's answer. */
  async function registerThrough(url: string) {
    const a: Tenant = await tenant(t);
    const body = deployment(url);
    expect((await t.private.post('/api/deployment', { token: a.token, json: body })).status).to.equal(201);
    const card = await upload(t.private, a.token, await filesystemStorage(t.private, a.token), '# card');
    const reply = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', unique('v'), card.file_id) });
    return { reply, key: body.deployment_key };
  }

  it('refuses a private address outside the allowed networks when the deployment is registered (400 naming the field)', async () => {
    const a = await tenant(t);
    const reply = await t.private.post('/api/deployment', { token: a.token, json: deployment('http://10.1.2.3:8080') });
    expect(reply.status).to.equal(400);
    expect(reply.body.message).to.equal('registry_connector_init.model_registry_url is not allowed: 10.1.2.3 is a private address outside the networks the platform may call');
  });

  it("answers a model registration through one of the platform's own services exactly as through a closed port (502)", async () => {
    own.requests = 0;
    const refused = await registerThrough(own.url);
    const closed = await registerThrough('http://127.0.0.1:1');
    expect(refused.reply.status).to.equal(502);
    expect(closed.reply.status).to.equal(502);
    expect(refused.reply.body.message).to.equal(`Deployment "${refused.key}": the model registry could not be reached.`);
    expect(refused.reply.body.message.replace(refused.key, 'K')).to.equal(closed.reply.body.message.replace(closed.key, 'K'));
    expect(refused.reply.body.message_code).to.equal(closed.reply.body.message_code);
    expect(own.requests, 'nothing reached the platform service').to.equal(0);
  });

  it("answers an S3 endpoint on one of the platform's own services exactly as a closed port (400)", async () => {
    own.requests = 0;
    const a = await tenant(t);
    const storage = (endpoint: string) => ({
      storage_key: unique('s3'),
      storage_class: 'didyma.storage.S3Storage',
      connector_init: { access_key: 'ak', secret_key: 'sk-secret', endpoint, bucket_name: 'bucket' },
    });
    const refused = await t.private.post('/api/storage', { token: a.token, json: storage(own.url) });
    const closed = await t.private.post('/api/storage', { token: a.token, json: storage('http://localhost:1') });
    expect(refused.status).to.equal(400);
    expect(closed.status).to.equal(400);
    expect(refused.body.message).to.equal(`bucket bucket not reachable at endpoint http://localhost:${own.port}: the endpoint could not be reached.`);
    expect(refused.body.message.replace(String(own.port), 'P')).to.equal(closed.body.message.replace('1:', 'P:'));
    expect(own.requests, 'nothing reached the platform service').to.equal(0);
  });

  it('refuses a private S3 endpoint outside the allowed networks when it is registered (400 naming the field)', async () => {
    const a = await tenant(t);
    const reply = await t.private.post('/api/storage', {
      token: a.token,
      json: { storage_key: unique('s3'), storage_class: 'didyma.storage.S3Storage', connector_init: { access_key: 'ak', secret_key: 'sk', endpoint: 'http://192.168.4.4:9000', bucket_name: 'bucket' } },
    });
    expect(reply.status).to.equal(400);
    expect(reply.body.message).to.equal('connector_init.endpoint is not allowed: 192.168.4.4 is a private address outside the networks the platform may call');
  });
});
