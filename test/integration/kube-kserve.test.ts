import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startExecutor } from '../../executor/start.js';
import type { KubeApi } from '../../infra/kube/api.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import type { RunningOperator } from '../../operator/start.js';
import { ownDatabase } from '../support/database.js';
import { filesystemStorage, tenant, upload, type Tenant } from '../support/fixtures.js';
import { installKServeCrd, kubectlApply, kubeOverrides, startTestOperator, testNamespace, testNamespaceName, waitFor } from '../support/kube.js';
import { ModelServers, startIrisExplainer, startMlserver, type MlserverModel, type StartedServer } from '../support/model-servers.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { collections } from '../../infra/kube/paths.js';
import type { InferenceService } from '../../infra/connectors/kserve/inference-service.js';
import { requireEnv } from '../support/services.js';
import { DashboardClient } from '../support/dashboard-client.js';

const REGISTRY = 'didyma.registry.KServeRegistryConnector';
const PROXY = 'didyma.proxy.KServeServerProxy';
const ISVC = { group: 'serving.kserve.io', version: 'v1beta1', plural: 'inferenceservices' };

/** A second address of a server: a TCP forwarder on another port, counting the connections it forwards. */
async function secondPort(target: string) {
  const { hostname, port } = new URL(target);
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    const upstream = net.connect(Number(port), hostname);
    socket.pipe(upstream).pipe(socket);
    const end = () => (socket.destroy(), upstream.destroy());
    socket.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * KServe beside didyma, on the test control plane: the InferenceService CRD
 * of test/fixtures/kube, an InferenceService whose status (written here as
 * KServe's controller writes it) points at a real MLServer, and the KServe
 * classes behind the API, the operator, the queue and an executor.
 */
describe('Kubernetes: KServe InferenceServices behind didyma (real MLServer)', function () {
  this.timeout(300_000);
  const name = unique('iris');
  const workspace = unique('ws-kserve');
  let kube: KubeConnection;
  let api: KubeApi;
  let models: string;
  let closed: string;
  let servers: ModelServers;
  let mlserver: MlserverModel;
  let explainer: StartedServer;
  let forwarder: Awaited<ReturnType<typeof secondPort>>;
  let own: Awaited<ReturnType<typeof ownDatabase>>;
  let t: TestPlatform;
  let operator: RunningOperator;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let owner: Tenant;
  let other: Tenant;
  let cardId: string;
  let deploymentKey: string;
  // A workspace whose deployment registers each new ready revision (`versioning: revision`), on a namespace of its own.
  const following = unique('ws-revisions');
  let revisionsNamespace: string;
  let follower: Tenant;
  let followerCardId: string;

  before(async () => {
    requireEnv('TEST_DATABASE_URL', 'postgres');
    servers = new ModelServers(requireEnv('TEST_PYTHON_VENV', 'python'));
    const starting = startMlserver(servers, { name, version: '1', signature: true });
    starting.catch(() => undefined);
    kube = await testNamespace('dy-kserve');
    api = await kube.api();
    await installKServeCrd();
    models = testNamespaceName('dy-kserve-models');
    closed = testNamespaceName('dy-kserve-closed');
    revisionsNamespace = testNamespaceName('dy-kserve-revisions');
    for (const namespace of [models, closed, revisionsNamespace]) await api.core.createNamespace({ body: { metadata: { name: namespace, labels: { 'didyma.io/test': 'true' } } } });
    // Only `workspace` may read `models`; nobody may read `closed`.
    const grants = `${models}=${workspace},${revisionsNamespace}=${following}`;
    own = await ownDatabase();
    t = await startTestPlatform({ ...kubeOverrides(kube.namespace), kserveNamespaces: new Map([
        [models, [workspace]],
        [revisionsNamespace, [following]],
      ]),
    }, undefined, { db: own.db });
    operator = await startTestOperator(kube.namespace, { DIDYMA_KSERVE_NAMESPACES: grants, DIDYMA_LEASE_SECONDS: '15' });
    owner = await tenant(t, 'supervisor', workspace);
    other = await tenant(t);
    follower = await tenant(t, 'supervisor', following);
    mlserver = await starting;
    explainer = await startIrisExplainer(servers, mlserver);
    forwarder = await secondPort(mlserver.url);
    cardId = (await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# Iris on KServe')).file_id;
    followerCardId = (await upload(t.private, follower.token, await filesystemStorage(t.private, follower.token), '# Iris, followed')).file_id;
    executor = await startExecutor(t.platform);
  });
  after(async () => {
    await executor?.close();
    await operator?.close();
    await t?.close();
    await own?.drop();
    await forwarder?.close();
    await servers?.close();
  });

  const deployment = (key: string, namespaces: string[], versioning?: string) => ({
    deployment_key: key,
    registry_connector_class: REGISTRY,
    registry_connector_init: { namespaces, ...(versioning ? { versioning } : {}) },
    server_proxy_class: PROXY,
    server_proxy_init: { namespaces },
  });

  /** Writes the status as KServe's controller would: the predictor's and the explainer's addresses, and the conditions. */
  async function setStatus(url: string, ready: boolean, namespace = models, revision = `${name}-predictor-00001`) {
    const status = ready ? 'True' : 'False';
    await api.patchStatus(
      { ...ISVC, namespace, name, fieldManager: 'kserve-controller-test' },
      {
        url,
        address: { url },
        components: {
          predictor: { url, address: { url }, latestReadyRevision: revision },
          explainer: { url: explainer.url, address: { url: explainer.url }, latestReadyRevision: `${name}-explainer-00001` },
        },
        conditions: [
          { type: 'PredictorReady', status, ...(ready ? {} : { reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }) },
          { type: 'ExplainerReady', status: 'True' },
          { type: 'Ready', status },
        ],
      },
    );
  }

  const modelPath = `/api/model/${name}/version/1`;

  async function invoke(path = modelPath, extra: Record<string, unknown> = {}, token = owner.token) {
    const session = (await t.public.post(`${path}/session`, { token })).body.id as string;
    const created = await t.public.post(`${path}/session/${session}/invocation`, { token, json: { type: 'PREDICT', order: 0, request: { type: 'FEATURES', body: JSON.stringify([mlserver.summary.sample]) }, ...extra } });
    expect(created.status, created.text).to.equal(201);
    return { session, id: created.body.id as string };
  }

  const finished = ({ session, id }: { session: string; id: string }, path = modelPath, token = owner.token) =>
    waitFor(
      'the invocation to finish',
      async () => {
        const reply = await t.public.get(`${path}/session/${session}/invocation/${id}`, { token });
        return ['COMPLETED', 'ERROR'].includes(reply.body.status) ? reply.body : undefined;
      },
      120_000,
    );

  it('refuses, with a 400, a deployment naming a namespace not opened to its workspace', async () => {
    const refused = await t.private.post('/api/deployment', { token: owner.token, json: deployment(unique('kserve'), [models, closed]) });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.message).to.equal(`registry_connector_init.namespaces names ${closed}, which the platform's operator has not opened to this workspace (DIDYMA_KSERVE_NAMESPACES)`);
    const otherWorkspace = await t.private.post('/api/deployment', { token: other.token, json: deployment(unique('kserve'), [models]) });
    expect(otherWorkspace.status, otherWorkspace.text).to.equal(400);
    expect(otherWorkspace.body.message).to.contain(`names ${models}, which the platform's operator has not opened`);
  });

  it('registers an InferenceService as a model, its schemas read from its metadata, and runs a PREDICT on its predictor through the queue', async () => {
    await kubectlApply(kube, { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace: models }, spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, protocolVersion: 'v2', storageUri: 'gs://models/iris' } }, explainer: { containers: [{ name: 'kserve-container', image: 'example.test/iris-explainer' }] } } });
    await setStatus(mlserver.url, true);
    const key = (deploymentKey = unique('kserve'));
    const created = await t.private.post('/api/deployment', { token: owner.token, json: deployment(key, [models]) });
    expect(created.status, created.text).to.equal(201);
    expect(created.body[0].registry_connector_init).to.deep.equal({ namespaces: models });
    await waitFor('the deployment to be applied', async () => (await t.private.get(`/api/deployment/${key}`, { token: owner.token })).body[0]?.cluster_state === 'applied');

    const registered = await t.private.post('/api/platform_model', {
      token: owner.token,
      json: { model_code: name, version: '1', name: 'Iris on KServe', description: 'An InferenceService', model_card_file_id: cardId, retry_policy: { max_attempts: 20, backoff_ms: 500, backoff_multiplier: 1 } },
    });
    expect(registered.status, registered.text).to.equal(201);
    expect(registered.body[0].native_metadata.registry).to.deep.include({ name, namespace: models, platform: 'kserve', ready: true, protocol: 'v2', latest_ready_revision: `${name}-predictor-00001` });
    expect(registered.body[0].input_schema.description).to.equal("From the model's Open Inference metadata: input-0 (FP32, shape any × 4).");
    expect(registered.body[0].output_schema.description).to.contain('predict (BYTES, shape any × 1)');

    const done = await finished(await invoke());
    expect(done.status, done.error ?? '').to.equal('COMPLETED');
    expect(JSON.parse(done.response).outputs[0].data).to.deep.equal([mlserver.summary.sample_prediction]);
  });

  it("refuses, with a 400 and before queueing, a body the metadata's schema refuses", async () => {
    const model = await t.platform.db('models').where({ model_code: name, version: '1' }).first();
    const queued = async () => Number((await t.platform.db('invocations').where({ model_id: model.id }).count({ n: '*' }))[0]!.n);
    const before = await queued();
    const session = (await t.public.post(`${modelPath}/session`, { token: owner.token })).body.id as string;
    const refused = await t.public.post(`${modelPath}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', order: 0, request: { type: 'FEATURES', body: JSON.stringify([[5.1, 3.5, 1.4]]) } } });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.message).to.match(/^request\.body/);
    expect(await queued()).to.equal(before);
  });

  it("explains a PREDICT through the service's explainer component, registered as <name>.explainer in the model's chain", async () => {
    const card = { model_card_file_id: cardId, description: 'On KServe' };
    const explains = { model_code: `${name}.explainer`, version: '2', name: 'Iris explainer', input_schema: { type: 'json', description: 'rows' }, output_schema: { type: 'json', description: 'contributions' }, ...card };
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: { model_code: name, version: '2', name: 'Iris, explained', ...card, explainer: explains } });
    expect(registered.status, registered.text).to.equal(201);
    expect(registered.body[0].explainer_metadata.native_metadata.registry).to.deep.include({ name, namespace: models, component: 'explainer', ready: true, protocol: 'v1' });
    const path = `/api/model/${name}/version/2`;
    const prediction = await invoke(path, { with_explanation: true });
    expect((await finished(prediction, path)).status).to.equal('COMPLETED');
    const explanation = await waitFor('the explanation to finish', async () => {
      const list = (await t.public.get(`${path}/session/${prediction.session}/invocation`, { token: owner.token })).body as Array<Record<string, any>>;
      return list.find((item) => item.type === 'EXPLAIN' && ['COMPLETED', 'ERROR'].includes(item.status));
    });
    expect(explanation.status, explanation.error ?? '').to.equal('COMPLETED');
    const [explained] = JSON.parse(explanation.response).explanations;
    expect(explained.predicted).to.equal(mlserver.summary.sample_prediction);
    expect(explained.contributions).to.have.length(4);
  });

  it('lists what the deployment offers for registration, with the versions registered, and hides it from another workspace', async () => {
    const path = `/api/deployment/${deploymentKey}/offered_model`;
    const offered = await t.private.get(path, { token: owner.token });
    expect(offered.status, offered.text).to.equal(200);
    expect(offered.body).to.deep.equal([
      {
        model_code: name,
        version: null,
        registered_versions: ['1', '2'],
        registry: { name, namespace: models, platform: 'kserve', component: 'predictor', ready: true, protocol: 'v2', host: new URL(mlserver.url).host, latest_ready_revision: `${name}-predictor-00001` },
      },
      {
        model_code: `${name}.explainer`,
        version: null,
        registered_versions: ['2'],
        registry: { name, namespace: models, platform: 'kserve', component: 'explainer', ready: true, protocol: 'v1', host: new URL(explainer.url).host, latest_ready_revision: `${name}-explainer-00001` },
      },
    ]);
    const hidden = await t.private.get(path, { token: other.token });
    expect(hidden.status, hidden.text).to.equal(404);
  });

  it('lists the offered service in the dashboard and registers it there with its model card', async () => {
    const client = new DashboardClient(t.auth.baseUrl);
    await client.signIn(owner.user.email, owner.user.password, owner.ws.name);
    const deployments = await client.get('/dashboard/deployments');
    expect(deployments.text).to.contain(`href="/dashboard/deployments/${deploymentKey}/offered"`);
    const offered = await client.get(`/dashboard/deployments/${deploymentKey}/offered`);
    expect(offered.status).to.equal(200);
    expect(offered.text).to.contain(`${models}/${name}`).and.contain('ready');
    const page = await client.get(`/dashboard/deployments/${deploymentKey}/offered/${name}`);
    expect(page.status).to.equal(200);
    const form = new FormData();
    // The storage a browser sends: the first of the select's options.
    const storageKey = /name="storage_key"[^]*?<option value="([^"]+)"/.exec(page.text)![1]!;
    for (const [field, value] of Object.entries({ version: '3', name: 'Iris from the dashboard', description: 'Registered from the offered list', storage_key: storageKey })) form.set(field, value);
    form.set('card', new Blob(['# Iris, registered in the dashboard'], { type: 'text/markdown' }), 'card.md');
    const registered = await client.postMultipart(`/dashboard/deployments/${deploymentKey}/offered/${name}`, form, page);
    expect(registered.status, /role="alert"[^]*?<\/(div|p)>/.exec(registered.text)?.[0]).to.equal(303);
    expect(registered.location).to.equal('/dashboard/models?notice=model-registered');
    expect(await t.platform.db('models').where({ model_code: name, version: '3', workspace_id: owner.ws.id }).first()).to.include({ name: 'Iris from the dashboard' });
    expect((await client.get('/dashboard/models')).text).to.contain(`${models}/${name}`);

    const other = new DashboardClient(t.auth.baseUrl);
    const stranger = await tenant(t, 'supervisor');
    await other.signIn(stranger.user.email, stranger.user.password, stranger.ws.name);
    expect((await other.get(`/dashboard/deployments/${deploymentKey}/offered`)).status).to.equal(404);
  });

  it('follows a new predictor address from the status with no change in didyma', async () => {
    expect(forwarder.connections()).to.equal(0);
    await setStatus(forwarder.url, true);
    await waitFor('the executor to see the new address', async () => {
      const done = await finished(await invoke());
      expect(done.status, done.error ?? '').to.equal('COMPLETED');
      return forwarder.connections() > 0;
    });
  });

  it('retries an invocation while the service is not ready, and completes it once it is', async () => {
    await setStatus(mlserver.url, false);
    const notReady = await waitFor('the model to show its service not ready', async () => {
      const serving = (await t.public.get(modelPath, { token: owner.token })).body.serving;
      return serving?.ready === false ? serving : undefined;
    });
    expect(notReady.not_ready_reason).to.match(/^PredictorReady is False \(MinimumReplicasUnavailable/);
    const invocation = await invoke();
    const failed = await waitFor('a failed attempt', async () => {
      const row = await t.platform.db('invocations').where({ id: invocation.id }).first();
      return row.attempts >= 2 && row.status !== 'ERROR' ? row : undefined;
    });
    expect(failed.status).to.not.equal('COMPLETED');
    await setStatus(mlserver.url, true);
    const done = await finished(invocation);
    expect(done.status, done.error ?? '').to.equal('COMPLETED');
    const attempts = done.attempts as Array<{ error?: string }>;
    expect(attempts.length).to.be.greaterThan(1);
    expect(attempts[0]?.error).to.contain(`InferenceService ${models}/${name} is not ready: PredictorReady is False (MinimumReplicasUnavailable: Deployment does not have minimum availability.)`);
  });

  /** Until the process's shared informer has seen the service at `revision`: what the follower reads. */
  const informerSees = (namespace: string, revision: string) =>
    waitFor(`the informer to see ${revision}`, async () => {
      const service = t.platform.kube!.informers.informer<InferenceService>(collections.inferenceServices(namespace)).get(name);
      return service?.status?.components?.predictor?.latestReadyRevision === revision;
    });

  it('only offers a new ready revision of a deployment without versioning: revision', async () => {
    const revision = `${name}-predictor-00002`;
    await setStatus(mlserver.url, true, models, revision);
    await informerSees(models, revision);
    await t.platform.kube!.revisions.runOnce();
    const deploymentId = (await t.platform.db('deployments').where({ deployment_key: deploymentKey }).first()).id;
    // Those the tests before registered (3 in the dashboard), and none of the revision's.
    expect(await t.platform.db('models').where({ deployment_id: deploymentId, model_code: name }).orderBy('id').pluck('version')).to.deep.equal(['1', '2', '3']);
    const offered = await t.private.get(`/api/deployment/${deploymentKey}/offered_model`, { token: owner.token });
    expect(offered.body[0]).to.deep.include({ model_code: name, registered_versions: ['1', '2', '3'] });
    expect(offered.body[0].registry.latest_ready_revision).to.equal(revision);
    // The model's page shows the service as the private server saw it last, beside what its registration recorded.
    const shown = await waitFor('the model to show the new revision', async () => {
      const body = (await t.public.get(modelPath, { token: owner.token })).body;
      return body.serving?.latest_ready_revision === revision ? body : undefined;
    });
    expect(shown.serving).to.deep.equal({ ready: true, latest_ready_revision: revision });
    expect(shown.native_metadata.registry.latest_ready_revision).to.equal(`${name}-predictor-00001`);
    const explained = (await t.public.get(`/api/model/${name}/version/2`, { token: owner.token })).body;
    expect(explained.explainer_metadata.serving).to.deep.equal({ ready: true, latest_ready_revision: `${name}-explainer-00001` });
  });

  it('registers each new ready revision once, as a copy of the latest registration, for a deployment with versioning: revision', async () => {
    await kubectlApply(kube, { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name, namespace: revisionsNamespace }, spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, protocolVersion: 'v2' } } } });
    await setStatus(mlserver.url, true, revisionsNamespace, `${name}-predictor-00011`);
    const key = unique('kserve-rev');
    const created = await t.private.post('/api/deployment', { token: follower.token, json: deployment(key, [revisionsNamespace], 'revision') });
    expect(created.status, created.text).to.equal(201);
    expect(created.body[0].registry_connector_init).to.deep.equal({ namespaces: revisionsNamespace, versioning: 'revision' });
    await waitFor('the deployment to be applied', async () => (await t.private.get(`/api/deployment/${key}`, { token: follower.token })).body[0]?.cluster_state === 'applied');
    const feedback = { type: 'object', properties: { correct: { type: 'boolean' } } };
    const first = await t.private.post('/api/platform_model', {
      token: follower.token,
      json: { model_code: name, version: 'first', name: 'Iris, followed', description: 'Each revision a version', model_card_file_id: followerCardId, feedback_schema: feedback, retry_policy: { max_attempts: 7, backoff_multiplier: 1 } },
    });
    expect(first.status, first.text).to.equal(201);
    expect(first.body[0].native_metadata).to.deep.include({ derived_schemas: ['input_schema', 'output_schema'] });

    const revision = `${name}-predictor-00012`;
    await setStatus(mlserver.url, true, revisionsNamespace, revision);
    const copy = await waitFor('the new revision to be registered', async () => {
      const reply = await t.public.get(`/api/model/${name}/version/${revision}`, { token: follower.token });
      return reply.status === 200 ? reply.body : undefined;
    });
    expect(copy).to.deep.include({ name: 'Iris, followed', description: 'Each revision a version', feedback_schema: feedback, input_schema: first.body[0].input_schema, output_schema: first.body[0].output_schema });
    expect(copy.retry_policy).to.deep.equal(first.body[0].retry_policy);
    expect(copy.native_metadata.registry).to.deep.include({ namespace: revisionsNamespace, latest_ready_revision: revision });
    const row = await t.platform.db('models').where({ model_code: name, version: revision }).first();
    expect(row).to.include({ model_card_file_id: followerCardId, created_by_id: null });
    await t.platform.audit.drain();
    const audited = await t.platform.db('audit_records').where({ workspace_id: follower.ws.id, actor_type: 'platform', resource_id: `${name}/${revision}` });
    expect(audited.map((r) => r.action)).to.deep.equal(['registerModel']);

    const path = `/api/model/${name}/version/${revision}`;
    const done = await finished(await invoke(path, {}, follower.token), path, follower.token);
    expect(done.status, done.error ?? '').to.equal('COMPLETED');

    // Two passes at once, as two replicas of the private server would run: one registration.
    const next = `${name}-predictor-00013`;
    await setStatus(mlserver.url, true, revisionsNamespace, next);
    await informerSees(revisionsNamespace, next);
    await Promise.all([t.platform.kube!.revisions.runOnce(), t.platform.kube!.revisions.runOnce()]);
    await t.platform.kube!.revisions.runOnce();
    const versions = await t.platform.db('models').where({ workspace_id: follower.ws.id }).orderBy('id').pluck('version');
    expect(versions).to.deep.equal(['first', revision, next]);
  });
});
