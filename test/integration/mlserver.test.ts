import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { filesystemStorage, OPEN_INFERENCE_PROXY, OPEN_INFERENCE_REGISTRY, tenant, upload, type Tenant } from '../support/fixtures.js';
import type { Reply } from '../support/http.js';
import { ModelServers, predictInNewSession, startMlserver, startWithPlatform, type MlserverModel } from '../support/model-servers.js';
import { unique, type TestPlatform } from '../support/platform.js';
import { requireEnv } from '../support/services.js';

/**
 * A real MLServer (from PyPI) serving a scikit-learn iris classifier trained at
 * setup, behind the Open Inference registry connector and server proxy: model
 * registration asks MLServer's repository, invocations run on MLServer.
 */
describe('MLServer behind the Open Inference connectors (real MLServer, scikit-learn model)', function () {
  this.timeout(240_000);
  const name = unique('iris-sklearn');
  const version = unique('v');
  const deploymentKey = unique('mlserver');
  let servers: ModelServers;
  let mlserver: MlserverModel;
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let owner: Tenant;
  let cardId: string;
  let registered: Reply;

  before(async () => {
    requireEnv('TEST_DATABASE_URL', 'postgres');
    servers = new ModelServers(requireEnv('TEST_PYTHON_VENV', 'python'));
    // It takes a while to start: the platform comes up meanwhile.
    ({ server: mlserver, t } = await startWithPlatform(startMlserver(servers, { name, version })));
    executor = await startExecutor(t.platform);
    owner = await tenant(t, 'supervisor');
    const storage = await filesystemStorage(t.private, owner.token);
    cardId = (await upload(t.private, owner.token, storage, '# Iris (scikit-learn on MLServer)')).file_id;
    const deployment = await t.private.post('/api/deployment', {
      token: owner.token,
      json: {
        deployment_key: deploymentKey,
        registry_connector_class: OPEN_INFERENCE_REGISTRY,
        registry_connector_init: { model_registry_url: mlserver.url },
        server_proxy_class: OPEN_INFERENCE_PROXY,
        server_proxy_init: { server_proxy_url: mlserver.url },
      },
    });
    if (deployment.status !== 201) throw new Error(`deployment: ${deployment.status} ${deployment.text}`);
    registered = await t.private.post('/api/platform_model', { token: owner.token, json: payload(name, version) });
  });
  after(async () => {
    await executor?.close();
    await servers?.close();
    await t?.close();
  });

  const modelPath = () => `/api/model/${name}/version/${version}`;

  function payload(modelCode: string, modelVersion: string) {
    return {
      model_code: modelCode,
      version: modelVersion,
      name: 'Iris species (scikit-learn)',
      description: 'Logistic regression on the iris measurements, served by MLServer',
      input_schema: { type: 'json', description: 'Rows of [sepal length, sepal width, petal length, petal width] in cm, or an Open Inference request' },
      output_schema: { type: 'json', description: 'Open Inference response' },
      model_card_file_id: cardId,
    };
  }

  async function invoke(body: unknown) {
    const { created, finished, attempts } = await predictInNewSession(t, owner.token, modelPath(), body);
    expect(created.body.status).to.equal('QUEUED');
    return { finished, attempts };
  }

  it("registers the model MLServer serves (201), with MLServer's metadata as native_metadata", async () => {
    expect(registered.status, registered.text).to.equal(201);
    const [model] = registered.body;
    expect(model).to.include({ model_code: name, version, workspace: owner.ws.name });
    expect(model.native_metadata.deployment_key).to.equal(deploymentKey);
    // What MLServer answers on GET /v2/models/{name}/versions/{version}.
    expect(model.native_metadata.registry).to.include({ name, platform: '' });
    expect(model.native_metadata.registry).to.have.property('inputs').that.is.an('array');
    expect(model.native_metadata.registry).to.have.property('outputs').that.is.an('array');
  });

  it('refuses a model MLServer does not serve with a 400 naming the pair', async () => {
    const otherVersion = unique('v');
    const wrongVersion = await t.private.post('/api/platform_model', { token: owner.token, json: payload(name, otherVersion) });
    expect(wrongVersion.status, wrongVersion.text).to.equal(400);
    expect(wrongVersion.body.message_code).to.equal('validation_error');
    expect(wrongVersion.body.message).to.include(`(${name}, ${otherVersion})`);

    const otherName = unique('not-on-mlserver');
    const wrongName = await t.private.post('/api/platform_model', { token: owner.token, json: payload(otherName, version) });
    expect(wrongName.status, wrongName.text).to.equal(400);
    expect(wrongName.body.message).to.include(`(${otherName}, ${version})`);
    expect(await t.platform.db('models').where({ model_code: otherName }).orWhere({ model_code: name, version: otherVersion })).to.deep.equal([]);
  });

  it('runs a PREDICT on MLServer: one row of measurements becomes one FP64 tensor, the species comes back', async () => {
    const { finished, attempts } = await invoke([mlserver.summary.sample]);
    expect(finished, finished.error ?? '').to.include({ status: 'COMPLETED', error: null });
    expect(attempts).to.equal(1);
    const response = JSON.parse(finished.response);
    expect(response).to.include({ model_name: name, model_version: version });
    expect(response.outputs).to.have.length(1);
    expect(response.outputs[0]).to.include({ name: 'predict', datatype: 'BYTES' });
    expect(response.outputs[0].shape).to.deep.equal([1, 1]);
    expect(response.outputs[0].data).to.deep.equal([mlserver.summary.sample_prediction]);
    expect(mlserver.summary.sample_prediction).to.equal('setosa');
  });

  it('predicts a batch of rows in one call', async () => {
    const { finished } = await invoke([
      [5.1, 3.5, 1.4, 0.2],
      [6.7, 3.0, 5.2, 2.3],
    ]);
    expect(finished.status, finished.error ?? '').to.equal('COMPLETED');
    expect(JSON.parse(finished.response).outputs[0].data).to.deep.equal(['setosa', 'virginica']);
  });

  it("marks an invocation ERROR with MLServer's reason when the scikit-learn runtime rejects the request, after one attempt", async () => {
    // An Open Inference request passes through as is; this one asks for an output the runtime does not have.
    const request = { inputs: [{ name: 'input-0', shape: [1, 4], datatype: 'FP64', data: mlserver.summary.sample }], outputs: [{ name: 'decision_function' }] };
    const { finished, attempts } = await invoke(request);
    expect(finished).to.include({ status: 'ERROR', response: '' });
    expect(finished.error).to.include(`Deployment "${deploymentKey}"`);
    expect(finished.error).to.include('HTTP 400');
    expect(finished.error).to.include("SKLearnModel only supports 'predict', 'predict_proba' and 'transform' as outputs (decision_function was received)");
    expect(attempts).to.equal(1);
  });

  it('marks an invocation ERROR after one attempt when the model fails on rows of the wrong width', async () => {
    const { finished, attempts } = await invoke([[5.1, 3.5]]);
    expect(finished).to.include({ status: 'ERROR', response: '' });
    // What the user reads names the deployment and the status, never the model server's address.
    expect(finished.error).to.match(new RegExp(`^Deployment "${deploymentKey}": the model server answered HTTP 500`));
    expect(finished.error).to.not.match(/127\.0\.0\.1|http:/);
    expect(attempts).to.equal(1);
    // Nothing runs it again: still ERROR, still one attempt, a moment later.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const row = await t.platform.db('invocations').where({ id: finished.id }).first();
    expect(row).to.include({ status: 'ERROR', attempts: 1 });
  });
});
