import { expect } from 'chai';
import { colleague, demoDeployment, tenant, type Tenant } from '../../test/support/fixtures.js';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';

describe('private server: a deployment’s limit of concurrent model-server calls', () => {
  let t: TestPlatform;
  let owner: Tenant;
  // Registration checks classes and init only, so no model server needs to listen here.
  const url = 'http://127.0.0.1:9';
  before(async () => {
    t = await startTestPlatform();
    owner = await tenant(t);
  });
  after(() => t.close());

  const read = async (key: string, token = owner.token) => (await t.private.get(`/api/deployment/${key}`, { token })).body[0];

  it('has no limit unless registered with one, and returns the limit it was given', async () => {
    const plain = await demoDeployment(t.private, owner.token, url);
    expect(await read(plain)).to.include({ max_concurrent_calls: null });
    const limited = await demoDeployment(t.private, owner.token, url, unique('demo'), { max_concurrent_calls: 2 });
    expect(await read(limited)).to.include({ max_concurrent_calls: 2 });
    const listed = (await t.private.get('/api/deployment', { token: owner.token })).body as Array<{ deployment_key: string; max_concurrent_calls: number | null }>;
    expect(listed.find((d) => d.deployment_key === limited)).to.include({ max_concurrent_calls: 2 });
  });

  it('lets a supervisor change the limit with PATCH, and clear it with null', async () => {
    const key = await demoDeployment(t.private, owner.token, url);
    const changed = await t.private.patch(`/api/deployment/${key}`, { token: owner.token, json: { max_concurrent_calls: 5 } });
    expect(changed.status).to.equal(200);
    expect(changed.body[0]).to.include({ deployment_key: key, max_concurrent_calls: 5 });
    expect(await read(key)).to.include({ max_concurrent_calls: 5 });
    const cleared = await t.private.patch(`/api/deployment/${key}`, { token: owner.token, json: { max_concurrent_calls: null } });
    expect(cleared.body[0]).to.include({ max_concurrent_calls: null });
  });

  it('refuses limits below 1 or not whole numbers, at registration and on change', async () => {
    const key = await demoDeployment(t.private, owner.token, url);
    for (const value of [0, -3, 1.5, 'many']) {
      const changed = await t.private.patch(`/api/deployment/${key}`, { token: owner.token, json: { max_concurrent_calls: value } });
      expect(changed.status, String(value)).to.equal(400);
      expect(JSON.stringify(changed.body)).to.include('max_concurrent_calls');
    }
    expect((await t.private.patch(`/api/deployment/${key}`, { token: owner.token, json: {} })).status).to.equal(400);
    const registered = await t.private.post('/api/deployment', {
      token: owner.token,
      json: { deployment_key: unique('demo'), registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector', registry_connector_init: { model_registry_url: url }, server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy', server_proxy_init: { server_proxy_url: url }, max_concurrent_calls: 0 },
    });
    expect(registered.status).to.equal(400);
    expect(await read(key)).to.include({ max_concurrent_calls: null });
  });

  it('lets only a supervisor of the deployment’s own workspace change it', async () => {
    const key = await demoDeployment(t.private, owner.token, url);
    const user = await colleague(t, owner, 'user');
    const stranger = await tenant(t);
    expect((await t.private.patch(`/api/deployment/${key}`, { token: user.token, json: { max_concurrent_calls: 1 } })).status).to.equal(403);
    expect((await t.private.patch(`/api/deployment/${key}`, { token: stranger.token, json: { max_concurrent_calls: 1 } })).status).to.equal(404);
    expect(await read(key, user.token)).to.include({ max_concurrent_calls: null });
  });
});
