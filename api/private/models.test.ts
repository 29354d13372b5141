import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { demoDeployment, filesystemStorage, modelPayload, tenant, upload, type Tenant } from '../../test/support/fixtures.js';
import { createDemoModelServer, type DemoModelServer } from '../../demo/model-server/server.js';
import { doublingSchema, SELF_REFERENCE, TWO_CYCLE } from '../../test/support/hostile-schemas.js';

describe('private server: model registration and deployments', () => {
  let t: TestPlatform;
  const demos: DemoModelServer[] = [];
  before(async () => {
    t = await startTestPlatform();
  });
  after(async () => {
    await Promise.all(demos.map((d) => d.close()));
    await t.close();
  });

  /** A supervisor with storage, a model card and a deployment of a demo server serving `version`. */
  async function setup(version = unique('v')) {
    const a = await tenant(t);
    const demo = await startDemoModelServerWith(version);
    const deployment = await demoDeployment(t.private, a.token, demo.url);
    const storage = await filesystemStorage(t.private, a.token);
    const card = await upload(t.private, a.token, storage, '# Iris classifier card');
    return { a, version, card: card.file_id, deployment, demo, storage };
  }

  async function startDemoModelServerWith(version: string) {
    const demo = createDemoModelServer({ version });
    const { url } = await demo.listen(0, '127.0.0.1');
    demos.push(demo);
    return Object.assign(demo, { url });
  }

  it('registers a model with its explainer, resolving each to the deployment that serves it', async () => {
    const { a, version, card, deployment } = await setup();
    const payload = modelPayload('iris-classifier', version, card, {
      feedback_schema: { type: 'object', properties: { correct: { type: 'boolean' } }, required: ['correct'], additionalProperties: false },
      explainer: modelPayload('iris-explainer', version, card, { need_context: true }),
    });
    const reply = await t.private.post('/api/platform_model', { token: a.token, json: payload });
    expect(reply.status).to.equal(201);
    expect(reply.body).to.have.length(1);
    const [model] = reply.body;
    expect(model).to.include({ model_code: 'iris-classifier', version, workspace: a.ws.name });
    expect(model.native_metadata.deployment_key).to.equal(deployment);
    expect(model.native_metadata.registry.name).to.equal('iris-classifier');
    expect(model.explainer_metadata).to.include({ model_code: 'iris-explainer', version, need_context: true });

    const listed = await t.public.get('/api/model', { token: a.token });
    // Newest first: the chain is registered in one transaction, so the explainer, with the higher id, leads.
    expect(listed.body.map((m: any) => [m.model_metadata.model_code, m.is_explainer, m.has_explainer])).to.deep.equal([
      ['iris-explainer', true, false],
      ['iris-classifier', false, true],
    ]);
    const one = await t.public.get(`/api/model/iris-classifier/version/${version}`, { token: a.token });
    expect(one.body.explainer_metadata.model_code).to.equal('iris-explainer');
  });

  it("answers what a deployment's registry offers only to its workspace, and 409 for a registry that does not list", async () => {
    const { a, deployment } = await setup();
    const path = `/api/deployment/${deployment}/offered_model`;
    const unlisted = await t.private.get(path, { token: a.token });
    expect(unlisted.status, unlisted.text).to.equal(409);
    expect(unlisted.body.message_code).to.equal('not_listable');
    const other = await tenant(t);
    const hidden = await t.private.get(path, { token: other.token });
    expect(hidden.status, hidden.text).to.equal(404);
  });

  it('keeps (model_code, version) unique across workspaces and forever, deleted ones included', async () => {
    const { a, version, card, demo } = await setup();
    const payload = modelPayload('iris-classifier', version, card);
    expect((await t.private.post('/api/platform_model', { token: a.token, json: payload })).status).to.equal(201);
    expect((await t.private.post('/api/platform_model', { token: a.token, json: payload })).status).to.equal(409);

    const b = await tenant(t);
    await demoDeployment(t.private, b.token, demo.url);
    const storageB = await filesystemStorage(t.private, b.token);
    const cardB = await upload(t.private, b.token, storageB, 'card');
    const elsewhere = await t.private.post('/api/platform_model', { token: b.token, json: modelPayload('iris-classifier', version, cardB.file_id) });
    expect(elsewhere.status).to.equal(409);

    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${version}`, { token: a.token })).status).to.equal(204);
    expect((await t.public.get(`/api/model/iris-classifier/version/${version}`, { token: a.token })).status).to.equal(404);
    expect((await t.private.post('/api/platform_model', { token: a.token, json: payload })).status).to.equal(409);
    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${version}`, { token: a.token })).status).to.equal(404);
  });

  it('accepts a chain of 10 explainers and refuses 11', async () => {
    const { a, card, storage } = await setup();
    const versions = Array.from({ length: 11 }, () => unique('x'));
    for (const v of versions) await demoDeployment(t.private, a.token, (await startDemoModelServerWith(v)).url);
    const chain = (count: number) => {
      let link: Record<string, unknown> | undefined;
      for (let i = count - 1; i >= 0; i--) link = modelPayload('iris-explainer', versions[i]!, card, link ? { explainer: link, need_context: true } : { need_context: true });
      return link!;
    };
    const mainVersion = versions[10]!;
    const eleven = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', mainVersion, card, { explainer: chain(11) }) });
    expect(eleven.status).to.equal(400);
    expect(eleven.body.message).to.match(/at most 10 explainers/);
    const ten = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', mainVersion, card, { explainer: chain(10) }) });
    expect(ten.status, ten.text).to.equal(201);
    let depth = 0;
    for (let m = ten.body[0].explainer_metadata; m; m = m.explainer_metadata) depth++;
    expect(depth).to.equal(10);
    expect(storage).to.be.a('string');
  });

  it('refuses what no deployment serves, unknown model cards and invalid schemas with 400 naming the field', async () => {
    const { a, version, card } = await setup();
    const unknown = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('no-such-model', version, card) });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.message).to.include('(no-such-model');
    const noCard = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, '00000000-0000-4000-8000-000000000000') });
    expect(noCard.status).to.equal(400);
    expect(noCard.body.message).to.match(/^model_card_file_id/);
    const badFeedback = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card, { feedback_schema: { type: 'nonsense' } }) });
    expect(badFeedback.status).to.equal(400);
    expect(badFeedback.body.message).to.match(/^feedback_schema/);
    const fileWithout = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card, { input_schema: { type: 'file' } }) });
    expect(fileWithout.status).to.equal(400);
    expect(fileWithout.body.message).to.match(/fileConstraints/);
    const schema = (inner: object) => modelPayload('iris-classifier', version, card, { input_schema: { type: 'json', schema: inner } });
    const backtracking = await t.private.post('/api/platform_model', { token: a.token, json: schema({ type: 'string', pattern: '^(a)\\1$' }) });
    expect(backtracking.status, 'a backreference needs a backtracking engine').to.equal(400);
    expect(backtracking.body.message).to.match(/^input_schema\.schema: not a valid JSON Schema/);
    const unbounded = await t.private.post('/api/platform_model', { token: a.token, json: schema({ type: 'array', uniqueItems: true }) });
    expect(unbounded.status).to.equal(400);
    expect(unbounded.body.message).to.equal('input_schema.schema: uniqueItems needs maxItems of at most 1000.');
    const badCode = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('bad code!', version, card) });
    expect(badCode.status).to.equal(400);
    const extra = await t.private.post('/api/platform_model', { token: a.token, json: { ...modelPayload('iris-classifier', version, card), workspace: 'other' } });
    expect(extra.status).to.equal(400);
    // nothing was written by the refused calls
    expect((await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card) })).status).to.equal(201);
  });

  it('refuses schemas whose references cycle or expand past the limit with 400 naming the cycle or the limit, and accepts one under it', async () => {
    const { a, version, card } = await setup();
    const register = (extra: Record<string, unknown>) => t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card, extra) });
    const json = (schema: object) => ({ type: 'json', schema });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ input_schema: json(SELF_REFERENCE) }, 'input_schema.schema: its references form a cycle, # → #; a schema may not refer back to itself.'],
      [{ output_schema: json(TWO_CYCLE) }, 'output_schema.schema: its references form a cycle, #/$defs/a → #/$defs/b → #/$defs/a; a schema may not refer back to itself.'],
      [{ feedback_schema: SELF_REFERENCE }, 'feedback_schema: its references form a cycle, # → #; a schema may not refer back to itself.'],
      [{ input_schema: json(doublingSchema(13)) }, 'input_schema.schema: the schema expands to more than 10000 subschemas once each $ref is counted where it is used; at most 10000.'],
      [{ feedback_schema: doublingSchema(13) }, 'feedback_schema: the schema expands to more than 10000 subschemas once each $ref is counted where it is used; at most 10000.'],
    ];
    for (const [extra, message] of cases) {
      const reply = await register(extra);
      expect(reply.status, reply.text).to.equal(400);
      expect(reply.body).to.include({ message, message_code: 'validation_error' });
    }
    // Eleven levels expand to 5,118 subschemas: under the limit.
    const under = await register({ input_schema: json(doublingSchema(11)), feedback_schema: doublingSchema(11) });
    expect(under.status, under.text).to.equal(201);
  });

  it('answers 502 naming the deployment when a registry is down, and writes nothing', async () => {
    const a = await tenant(t);
    const version = unique('v');
    const demo = await startDemoModelServerWith(version);
    const key = await demoDeployment(t.private, a.token, demo.url);
    const storage = await filesystemStorage(t.private, a.token);
    const card = await upload(t.private, a.token, storage, 'card');
    await demo.close();
    const reply = await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card.file_id) });
    expect(reply.status).to.equal(502);
    expect(reply.body.message).to.include(key);
    expect(await t.platform.db('models').where({ model_code: 'iris-classifier', version })).to.have.length(0);
  });

  it('manages deployments: 201 array, list, get as array, secrets masked, 409 on reuse, soft delete', async () => {
    const a = await tenant(t);
    const pat = `pat-${unique('secret')}`;
    const key = unique('dep');
    const body = {
      deployment_key: key,
      registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
      registry_connector_init: { model_registry_url: 'http://127.0.0.1:9', tracking_server_url: 'http://127.0.0.1:9', tracking_server_pat: pat },
      server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
      server_proxy_init: { server_proxy_url: 'http://127.0.0.1:9', server_proxy_pat: pat },
    };
    const created = await t.private.post('/api/deployment', { token: a.token, json: body });
    expect(created.status).to.equal(201);
    expect(created.body[0]).to.include({ deployment_key: key, workspace: a.ws.name });
    expect(created.body[0].server_proxy_init.server_proxy_pat).to.equal('********');
    const row = await t.platform.db('deployments').where({ deployment_key: key }).first();
    expect(JSON.stringify(row)).to.not.include(pat);
    for (const path of ['/api/deployment', `/api/deployment/${key}`]) {
      const reply = await t.private.get(path, { token: a.token });
      expect(reply.status).to.equal(200);
      expect(reply.text).to.not.include(pat);
      expect(reply.body).to.be.an('array').with.length(1);
    }
    expect((await t.private.post('/api/deployment', { token: a.token, json: body })).status).to.equal(409);
    expect((await t.private.delete(`/api/deployment/${key}`, { token: a.token })).status).to.equal(204);
    expect((await t.private.get(`/api/deployment/${key}`, { token: a.token })).status).to.equal(404);
    expect((await t.private.post('/api/deployment', { token: a.token, json: body })).status).to.equal(409);
  });

  it('answers 400 naming the schema a registration leaves out when the registry records none', async () => {
    const { a, version, card } = await setup();
    const { input_schema: _input, ...withoutInput } = modelPayload('iris-classifier', version, card);
    const reply = await t.private.post('/api/platform_model', { token: a.token, json: withoutInput });
    expect(reply.status).to.equal(400);
    expect(reply.body.message).to.match(/^input_schema is required: the registry of deployment "demo-[^"]+" records no signature for \(iris-classifier, /);
    expect(reply.body.details).to.deep.equal([{ field: 'input_schema', message: 'is required' }]);
    expect(await t.platform.db('models').where({ version })).to.deep.equal([]);
  });

  it('validates deployment classes and URLs', async () => {
    const a: Tenant = await tenant(t);
    const base = {
      deployment_key: unique('dep'),
      registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
      registry_connector_init: { model_registry_url: 'http://203.0.113.3:8080' },
      server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
      server_proxy_init: { server_proxy_url: 'http://203.0.113.3:8080' },
    };
    const unknownClass = await t.private.post('/api/deployment', { token: a.token, json: { ...base, server_proxy_class: 'child_process.exec' } });
    expect(unknownClass.status).to.equal(400);
    expect(unknownClass.body.message).to.include('didyma.proxy.MlflowServerProxy');
    const metadata = await t.private.post('/api/deployment', { token: a.token, json: { ...base, server_proxy_init: { server_proxy_url: 'http://169.254.169.254/latest' } } });
    expect(metadata.status).to.equal(400);
    expect(metadata.body.message).to.include('server_proxy_init.server_proxy_url');
    const scheme = await t.private.post('/api/deployment', { token: a.token, json: { ...base, registry_connector_init: { model_registry_url: 'file:///etc/passwd' } } });
    expect(scheme.status).to.equal(400);
    const missing = await t.private.post('/api/deployment', { token: a.token, json: { ...base, server_proxy_init: {} } });
    expect(missing.status).to.equal(400);
    expect(missing.body.message).to.include('server_proxy_url');
  });

  it('keeps deployments and models of one workspace invisible to another, and writes to supervisors', async () => {
    const { a, version, card, deployment } = await setup();
    await t.private.post('/api/platform_model', { token: a.token, json: modelPayload('iris-classifier', version, card) });
    const b = await tenant(t);
    expect((await t.private.get(`/api/deployment/${deployment}`, { token: b.token })).status).to.equal(404);
    expect((await t.private.delete(`/api/deployment/${deployment}`, { token: b.token })).status).to.equal(404);
    expect((await t.private.get('/api/deployment', { token: b.token })).body).to.deep.equal([]);
    expect((await t.public.get(`/api/model/iris-classifier/version/${version}`, { token: b.token })).status).to.equal(404);
    expect((await t.private.delete(`/api/platform_model/iris-classifier/version/${version}`, { token: b.token })).status).to.equal(404);
    const user = await tenant(t, 'user');
    expect((await t.private.post('/api/platform_model', { token: user.token, json: modelPayload('iris-classifier', unique('v'), card) })).status).to.equal(403);
    expect((await t.private.delete(`/api/deployment/${deployment}`, { token: a.token })).status).to.equal(409);
  });
});

