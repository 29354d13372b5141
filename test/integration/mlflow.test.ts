import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import { filesystemStorage, tenant, upload, type Tenant } from '../support/fixtures.js';
import type { Reply } from '../support/http.js';
import { ModelServers, predictInNewSession, registerMlflowModel, startWithPlatform, startMlflowScoring, startMlflowTracking, type RegisteredMlflowModel, type StartedServer } from '../support/model-servers.js';
import { unique, type TestPlatform } from '../support/platform.js';
import { requireEnv } from '../support/services.js';

const MLFLOW_REGISTRY = 'didyma.registry.MlflowRegistryConnector';
const MLFLOW_PROXY = 'didyma.proxy.MlflowServerProxy';

/**
 * A real MLflow tracking server with its model registry (from PyPI), a
 * scikit-learn iris classifier logged and registered there at setup, and
 * MLflow's scoring server (`mlflow models serve`) running that registered
 * version, behind the MLflow registry connector and server proxy.
 */
describe('MLflow behind the MLflow connectors (real tracking server, registry and scoring server)', function () {
  this.timeout(300_000);
  const name = unique('iris-mlflow');
  const deploymentKey = unique('mlflow');
  let servers: ModelServers;
  let tracking: StartedServer;
  let scoring: StartedServer;
  let model: RegisteredMlflowModel;
  let t: TestPlatform;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let owner: Tenant;
  let cardId: string;
  let registered: Reply;

  before(async () => {
    requireEnv('TEST_DATABASE_URL', 'postgres');
    servers = new ModelServers(requireEnv('TEST_MLFLOW_VENV', 'python'));
    // It takes a while to start: the platform comes up meanwhile.
    ({ server: tracking, t } = await startWithPlatform(startMlflowTracking(servers)));
    model = await registerMlflowModel(servers, tracking.url, name);
    scoring = await startMlflowScoring(servers, tracking.url, `models:/${name}/${model.version}`);

    executor = await startExecutor(t.platform);
    owner = await tenant(t, 'supervisor');
    const storage = await filesystemStorage(t.private, owner.token);
    cardId = (await upload(t.private, owner.token, storage, '# Iris (scikit-learn on MLflow)')).file_id;
    const deployment = await t.private.post('/api/deployment', {
      token: owner.token,
      json: {
        deployment_key: deploymentKey,
        registry_connector_class: MLFLOW_REGISTRY,
        registry_connector_init: { model_registry_url: tracking.url, tracking_server_url: tracking.url },
        server_proxy_class: MLFLOW_PROXY,
        server_proxy_init: { server_proxy_url: scoring.url },
      },
    });
    if (deployment.status !== 201) throw new Error(`deployment: ${deployment.status} ${deployment.text}`);
    registered = await t.private.post('/api/platform_model', { token: owner.token, json: payload(name, model.version) });
  });
  after(async () => {
    await executor?.close();
    await servers?.close();
    await t?.close();
  });

  const modelPath = () => `/api/model/${name}/version/${model.version}`;

  function payload(modelCode: string, version: string) {
    return {
      model_code: modelCode,
      version,
      name: 'Iris species (MLflow)',
      description: 'Logistic regression on the iris measurements, from the MLflow model registry',
      input_schema: {
        type: 'json',
        description: 'A frame in split orientation: the logged feature names and rows of values',
        schema: { type: 'object', required: ['columns', 'data'], properties: { columns: { type: 'array', items: { type: 'string' } }, data: { type: 'array', items: { type: 'array' } } } },
      },
      output_schema: { type: 'json', description: 'MLflow scoring server predictions' },
      model_card_file_id: cardId,
    };
  }

  async function invoke(body: unknown) {
    const { finished, attempts } = await predictInNewSession(t, owner.token, modelPath(), body);
    return { finished, attempts };
  }

  it("registers the model version from MLflow's registry (201), with its registry record as native_metadata", async () => {
    expect(registered.status, registered.text).to.equal(201);
    const [registeredModel] = registered.body;
    expect(registeredModel).to.include({ model_code: name, version: '1', workspace: owner.ws.name });
    const { deployment_key, registry } = registeredModel.native_metadata;
    expect(deployment_key).to.equal(deploymentKey);
    // MLflow's model-versions/get record, with registered-models/get under registered_model.
    expect(registry).to.include({ name, version: '1', run_id: model.run_id, source: model.model_uri, status: 'READY' });
    expect(registry.registered_model).to.include({ name });
    expect(registry.registered_model.latest_versions.map((v: any) => v.version)).to.include('1');
  });

  it('refuses a version MLflow does not have, and a name it does not have, with a 400 naming the pair', async () => {
    const wrongVersion = await t.private.post('/api/platform_model', { token: owner.token, json: payload(name, '2') });
    expect(wrongVersion.status, wrongVersion.text).to.equal(400);
    expect(wrongVersion.body.message_code).to.equal('validation_error');
    expect(wrongVersion.body.message).to.include(`(${name}, 2)`);

    const otherName = unique('not-in-mlflow');
    const wrongName = await t.private.post('/api/platform_model', { token: owner.token, json: payload(otherName, '1') });
    expect(wrongName.status, wrongName.text).to.equal(400);
    expect(wrongName.body.message).to.include(`(${otherName}, 1)`);
    expect(await t.platform.db('models').where({ model_code: otherName }).orWhere({ model_code: name, version: '2' })).to.deep.equal([]);
  });

  it('runs a PREDICT on the scoring server: a {columns, data} body is sent as dataframe_split, the species comes back', async () => {
    expect(model.feature_names).to.deep.equal(['sepal length (cm)', 'sepal width (cm)', 'petal length (cm)', 'petal width (cm)']);
    const { finished, attempts } = await invoke({ columns: model.feature_names, data: [model.sample, [6.7, 3.0, 5.2, 2.3]] });
    expect(finished, finished.error ?? '').to.include({ status: 'COMPLETED', error: null });
    expect(attempts).to.equal(1);
    expect(JSON.parse(finished.response)).to.deep.equal({ predictions: [model.sample_prediction, 'virginica'] });
    expect(model.sample_prediction).to.equal('setosa');
  });

  it("marks an invocation ERROR with MLflow's schema error when the frame lacks the model's columns, after one attempt", async () => {
    const { finished, attempts } = await invoke({ columns: ['sepal length (cm)', 'sepal width (cm)'], data: [[5.1, 3.5]] });
    expect(finished).to.include({ status: 'ERROR', response: '' });
    expect(finished.error).to.match(new RegExp(`^Deployment "${deploymentKey}": the model server answered HTTP 400`));
    expect(finished.error).to.not.match(/127\.0\.0\.1|http:/);
    expect(finished.error).to.include('INVALID_PARAMETER_VALUE');
    expect(finished.error).to.include('Failed to enforce schema');
    expect(attempts).to.equal(1);
  });

  describe('a registration that gives no schemas', () => {
    const derivedName = unique('iris-signed');
    let derived: RegisteredMlflowModel;

    // The same iris model logged again under another name; the scoring server of the first answers for it.
    before(async () => {
      derived = await registerMlflowModel(servers, tracking.url, derivedName);
    });

    it("takes the input and output schemas from the logged model's signature, and validates invocations with them", async () => {
      const { input_schema: _input, output_schema: _output, ...bare } = payload(derivedName, derived.version);
      const reply = await t.private.post('/api/platform_model', { token: owner.token, json: bare });
      expect(reply.status, reply.text).to.equal(201);
      const [model] = reply.body;
      expect(model.input_schema.type).to.equal('json');
      expect(model.input_schema.fields).to.deep.equal(derived.feature_names.map((feature) => ({ name: feature, type: 'double', required: true })));
      expect(model.input_schema.description).to.equal(`From the MLflow signature: columns ${derived.feature_names.map((f) => `${f} (double)`).join(', ')}.`);
      expect(model.output_schema.schema).to.deep.equal({ type: 'object', required: ['predictions'], properties: { predictions: { type: 'array', items: { type: 'string' } } } });

      const path = `/api/model/${derivedName}/version/${derived.version}`;
      const record = Object.fromEntries(derived.feature_names.map((feature, i) => [feature, derived.sample[i]]));
      const { finished } = await predictInNewSession(t, owner.token, path, [record]);
      expect(finished, finished.error ?? '').to.include({ status: 'COMPLETED', error: null });
      expect(JSON.parse(finished.response)).to.deep.equal({ predictions: [derived.sample_prediction] });

      const session = await t.public.post(`${path}/session`, { token: owner.token });
      const { [derived.feature_names[0]!]: _dropped, ...incomplete } = record;
      const refused = await t.public.post(`${path}/session/${session.body.id}/invocation`, {
        token: owner.token,
        json: { type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify(incomplete) } },
      });
      expect(refused.status, refused.text).to.equal(400);
    });

    it('refuses an MLflow deployment without tracking_server_url, naming the field', async () => {
      const reply = await t.private.post('/api/deployment', {
        token: owner.token,
        json: {
          deployment_key: unique('mlflow-untracked'),
          registry_connector_class: MLFLOW_REGISTRY,
          registry_connector_init: { model_registry_url: tracking.url },
          server_proxy_class: MLFLOW_PROXY,
          server_proxy_init: { server_proxy_url: scoring.url },
        },
      });
      expect(reply.status).to.equal(400);
      expect(reply.body.message).to.equal('registry_connector_init.tracking_server_url is required: the connector reads the model signature from the tracking server');
    });
  });
});
