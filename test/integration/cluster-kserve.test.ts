import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from '../support/http.js';
import { upload } from '../support/fixtures.js';
import { emptyAndRemoveBucket, s3Admin } from '../support/s3-admin.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { credentialsNamespaceOf, KSERVE_CRD_FILE, waitFor } from '../support/kube.js';
import { createHostDatabase, dropHostDatabase, freshTestNamespace, helm, hostDatabaseSecret, hostServiceValues, invitedSupervisor, hostServices, imageValues, importKServeImage, importProjectImage, kubectl, kubectlApply, NODE_VALUES, runningCluster, serviceClient, testNamespace, type Cluster } from '../support/cluster.js';

const RELEASE = 'didyma';
const CHART = 'charts/didyma';
const PASSWORD = 'Cluster-Pass-42';
const SERVICE = 'iris';
const ISVC = 'inferenceservice.serving.kserve.io';

/**
 * KServe beside didyma on the real single-node cluster: KServe's own model
 * server (the `kserve` package's ModelServer, scripts/services/kserve.sh) as
 * pods of a RawDeployment-style Deployment and Service per revision, the
 * InferenceService's status written as KServe's controller writes it (the
 * controller cannot be built here), and the chart's pods discovering,
 * registering and calling it through the queue.
 */
describe('Cluster: a KServe InferenceService served through didyma', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-ks-${suffix}`;
  const models = `dy-ks-models-${suffix}`;
  const database = `didyma_ks_${suffix}`;
  const queue = `didyma.ks.${suffix}`;
  const bucket = `dy-ks-${suffix}`;
  let cluster: Cluster;
  let image: string;
  let kserveImage: string;
  let token: string;
  let other: string;
  let priv: Client;
  let pub: Client;
  const modelPath = `/api/model/${SERVICE}/version/1`;

  /** A predictor (or explainer) revision as KServe's RawDeployment mode makes it: a Deployment and a Service on port 80. */
  const revision = (component: 'predictor' | 'explainer', number: number) => {
    const name = `${SERVICE}-${component}-${String(number).padStart(5, '0')}`;
    const labels = { app: name };
    return {
      name,
      url: `http://${name}.${models}.svc.cluster.local`,
      objects: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name, namespace: models, labels },
          spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: {
                containers: [
                  {
                    name: 'kserve-container',
                    image: kserveImage,
                    imagePullPolicy: 'Never',
                    args: ['--model_name', SERVICE, '--revision', String(number), '--http_port', '8080'],
                    ports: [{ containerPort: 8080 }],
                    readinessProbe: { httpGet: { path: `/v2/models/${SERVICE}/ready`, port: 8080 }, periodSeconds: 2 },
                    resources: { requests: { cpu: '50m', memory: '256Mi' }, limits: { memory: '768Mi' } },
                  },
                ],
              },
            },
          },
        },
        { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: models }, spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] } },
      ],
    };
  };

  const available = (name: string) => kubectl(cluster, '-n', models, 'rollout', 'status', `deployment/${name}`, '--timeout=300s');

  /** Writes the status as KServe's controller would: the predictor's (and explainer's) address, its latest ready revision, the conditions. */
  async function setStatus(predictor: { name: string; url: string }, ready: boolean) {
    const explainer = revision('explainer', 1);
    const status = ready ? 'True' : 'False';
    const body = {
      status: {
        url: predictor.url,
        address: { url: predictor.url },
        components: {
          predictor: { url: predictor.url, address: { url: predictor.url }, latestReadyRevision: predictor.name, latestCreatedRevision: predictor.name },
          explainer: { url: explainer.url, address: { url: explainer.url }, latestReadyRevision: explainer.name },
        },
        conditions: [
          { type: 'PredictorReady', status, ...(ready ? {} : { reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }) },
          { type: 'ExplainerReady', status: 'True' },
          { type: 'Ready', status },
        ],
      },
    };
    await kubectl(cluster, '-n', models, 'patch', ISVC, SERVICE, '--subresource=status', '--type=merge', '-p', JSON.stringify(body));
  }

  async function invoke(extra: Record<string, unknown> = {}): Promise<{ session: string; id: string }> {
    const session = await pub.post(`${modelPath}/session`, { token });
    expect(session.status, session.text).to.equal(201);
    const body = JSON.stringify({ inputs: [{ name: 'input-0', datatype: 'FP64', shape: [1, 4], data: [5.1, 3.5, 1.4, 0.2] }] });
    const created = await pub.post(`${modelPath}/session/${session.body.id}/invocation`, { token, json: { type: 'PREDICT', order: 0, request: { type: 'FEATURES', body }, ...extra } });
    expect(created.status, created.text).to.equal(201);
    return { session: session.body.id, id: created.body.id };
  }

  const finished = ({ session, id }: { session: string; id: string }) =>
    waitFor('the invocation to finish', async () => {
      const reply = await pub.get(`${modelPath}/session/${session}/invocation/${id}`, { token });
      return ['COMPLETED', 'ERROR'].includes(reply.body.status) ? reply.body : undefined;
    }, 240_000, 500);

  before(async () => {
    cluster = runningCluster();
    image = importProjectImage(cluster);
    kserveImage = importKServeImage(cluster);
    await createHostDatabase(database);
    await s3Admin().makeBucket(bucket);
    await freshTestNamespace(cluster, namespace);
    await testNamespace(cluster, models);
    await kubectl(cluster, 'apply', '--server-side', '--field-manager=didyma-tests', '-f', KSERVE_CRD_FILE);
    await kubectl(cluster, 'wait', '--for=condition=Established', '--timeout=60s', 'crd/inferenceservices.serving.kserve.io');
    const first = revision('predictor', 1);
    const explainer = revision('explainer', 1);
    await kubectlApply(cluster, [
      ...hostServices(cluster, namespace, ['postgresql', 'rabbitmq', 'minio', 'prometheus']),
      hostDatabaseSecret(namespace, database),
      ...first.objects,
      ...explainer.objects,
      {
        apiVersion: 'serving.kserve.io/v1beta1',
        kind: 'InferenceService',
        metadata: { name: SERVICE, namespace: models },
        spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, protocolVersion: 'v2', storageUri: 'gs://models/iris' } }, explainer: { containers: [{ name: 'kserve-container', image: kserveImage }] } },
      },
    ]);
    const values = [
      ...imageValues('image', image),
      ...hostServiceValues(queue, PASSWORD),
      // The bootstrap's workspace may discover and call the services of `models`; no other may.
      `kserve.namespaces[0].namespace=${models}`,
      'kserve.namespaces[0].workspaces[0]=default',
      ...NODE_VALUES,
      // No pod range: the model servers' pods are reached through the egress rule of kserve.namespaces, by namespace.
      'egress.allowCidrs={10.88.0.1/32,10.96.0.0/16}',
    ];
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...values.flatMap((value) => ['--set', value]), '--wait', '--timeout', '5m');
    const service = (component: string, port: number) => serviceClient(cluster, namespace, `${RELEASE}-${component}`, port);
    const auth = await service('auth', 8080);
    priv = await service('private', 8081);
    pub = await service('public', 8082);
    const login = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(login.status, login.text).to.equal(200);
    token = login.body.access;
    // A supervisor of another workspace, invited and registered as a person is.
    other = await invitedSupervisor(auth, token, `other-${suffix}`, PASSWORD);
    await available(first.name);
    await available(explainer.name);
    await setStatus(first, true);
  });

  after(async () => {
    if (!cluster) return;
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, models, credentialsNamespaceOf(namespace), '--wait=false', '--ignore-not-found').catch(() => undefined);
    await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queue);
    await dropHostDatabase(database).catch(() => undefined);
    await emptyAndRemoveBucket(s3Admin(), bucket).catch(() => undefined);
  });

  const kserveDeployment = (key: string) => ({
    deployment_key: key,
    registry_connector_class: 'didyma.registry.KServeRegistryConnector',
    registry_connector_init: { namespaces: [models] },
    server_proxy_class: 'didyma.proxy.KServeServerProxy',
    server_proxy_init: { namespaces: [models] },
  });

  it('registers the InferenceService as a model and runs a prediction on its predictor pod through the queue', async () => {
    const key = `kserve-${suffix}`;
    const created = await priv.post('/api/deployment', { token, json: kserveDeployment(key) });
    expect(created.status, created.text).to.equal(201);
    await waitFor('the deployment to be applied', async () => (await priv.get(`/api/deployment/${key}`, { token })).body[0]?.cluster_state === 'applied', 120_000, 500);
    const storage = await priv.post('/api/storage', {
      token,
      json: { storage_key: 'cards', storage_class: 'didyma.storage.S3Storage', connector_init: { endpoint: 'http://minio:9000', bucket_name: bucket, access_key: requireEnv('TEST_S3_ACCESS_KEY', 'minio'), secret_key: requireEnv('TEST_S3_SECRET_KEY', 'minio') } },
    });
    expect(storage.status, storage.text).to.equal(201);
    const offered = await priv.get(`/api/deployment/${key}/offered_model`, { token });
    expect(offered.status, offered.text).to.equal(200);
    expect(offered.body.map((o: { model_code: string }) => o.model_code).sort()).to.deep.equal([SERVICE, `${SERVICE}.explainer`]);
    const card = (await upload(priv, token, 'cards', '# Iris on KServe')).file_id;
    const described = { model_card_file_id: card, description: 'An InferenceService on KServe' };
    const registered = await priv.post('/api/platform_model', {
      token,
      json: {
        model_code: SERVICE,
        version: '1',
        name: 'Iris on KServe',
        ...described,
        feedback_schema: { type: 'object', properties: { correct: { type: 'boolean' } }, required: ['correct'] },
        explainer: { model_code: `${SERVICE}.explainer`, version: '1', name: 'Iris explainer', ...described, input_schema: { type: 'json', description: 'rows' }, output_schema: { type: 'json', description: 'contributions' } },
        retry_policy: { max_attempts: 20, backoff_ms: 2000, backoff_multiplier: 1 },
      },
    });
    expect(registered.status, registered.text).to.equal(201);
    expect(registered.body[0].native_metadata.registry).to.deep.include({ name: SERVICE, namespace: models, platform: 'kserve', ready: true, protocol: 'v2', latest_ready_revision: `${SERVICE}-predictor-00001` });
    expect(registered.body[0].input_schema.description).to.equal("From the model's Open Inference metadata: input-0 (FP64, shape any × 4).");
    expect(registered.body[0].explainer_metadata.native_metadata.registry).to.deep.include({ name: SERVICE, namespace: models, component: 'explainer', ready: true, protocol: 'v1' });

    const done = await finished(await invoke());
    expect(done.status, JSON.stringify(done.attempts)).to.equal('COMPLETED');
    const answer = JSON.parse(done.response);
    expect(answer).to.deep.include({ model_name: SERVICE, model_version: '1' });
    expect(answer.outputs[0].data).to.deep.equal([0]);
  });

  it("refuses, with a 400 and before queueing, a body the metadata's schema refuses", async () => {
    const session = await pub.post(`${modelPath}/session`, { token });
    const body = JSON.stringify({ inputs: [{ name: 'input-0', datatype: 'FP64', shape: [1, 3], data: [5.1, 3.5, 1.4] }] });
    const refused = await pub.post(`${modelPath}/session/${session.body.id}/invocation`, { token, json: { type: 'PREDICT', order: 0, request: { type: 'FEATURES', body } } });
    expect(refused.status, refused.text).to.equal(400);
    expect((await pub.get(`${modelPath}/session/${session.body.id}/invocation`, { token })).body).to.deep.equal([]);
  });

  it("explains a prediction through the service's explainer pod, and takes feedback on it", async () => {
    const prediction = await invoke({ with_explanation: true });
    const predicted = await finished(prediction);
    expect(predicted.status, JSON.stringify(predicted.attempts ?? predicted.error)).to.equal('COMPLETED');
    const explanation = await waitFor('the explanation to finish', async () => {
      const list = (await pub.get(`${modelPath}/session/${prediction.session}/invocation`, { token })).body as Array<Record<string, any>>;
      return list.find((item) => item.type === 'EXPLAIN' && ['COMPLETED', 'ERROR'].includes(item.status));
    }, 240_000, 500);
    expect(explanation.status, String(explanation.error)).to.equal('COMPLETED');
    const [explained] = JSON.parse(explanation.response).explanations;
    expect(explained.predicted).to.equal(0);
    expect(explained.contributions).to.have.length(4);
    const feedback = await pub.post(`${modelPath}/session/${prediction.session}/invocation/${prediction.id}/feedback`, { token, json: { request: { body: JSON.stringify({ correct: true }) } } });
    expect(feedback.status, feedback.text).to.equal(201);

    // The session as data: its prediction, explanation and feedback, exported to the workspace's storage.
    expect((await pub.patch(`${modelPath}/session/${prediction.session}?state=CLOSED`, { token })).status).to.equal(200);
    const exported = await pub.post(`${modelPath}/session/${prediction.session}/dataset`, { token, json: { storage_key: 'cards' } });
    expect(exported.status, exported.text).to.equal(201);
    const records = (await pub.get(`/api/dataset/${exported.body.id}/records`, { token })).text.trim().split('\n').map((line) => JSON.parse(line));
    expect(records.map((record: { invocation_id: string }) => record.invocation_id)).to.include(prediction.id);
  });

  it('follows a new predictor revision with no change in didyma', async () => {
    const second = revision('predictor', 2);
    await kubectlApply(cluster, second.objects);
    await available(second.name);
    await setStatus(second, true);
    await waitFor('a prediction served by revision 2', async () => {
      const done = await finished(await invoke());
      expect(done.status, JSON.stringify(done.attempts)).to.equal('COMPLETED');
      return JSON.parse(done.response).model_version === '2';
    }, 240_000, 1000);
  });

  it('retries while the service is not ready, and completes once it is again', async () => {
    const second = revision('predictor', 2);
    await setStatus(second, false);
    const invocation = await invoke();
    const attempts = await waitFor('a refused attempt', async () => {
      const reply = await pub.get(`${modelPath}/session/${invocation.session}/invocation/${invocation.id}`, { token });
      return (reply.body.attempts as Array<{ error?: string }> | undefined)?.find((attempt) => attempt.error);
    }, 120_000, 500);
    expect(attempts.error).to.contain(`InferenceService ${models}/${SERVICE} is not ready`);
    await setStatus(second, true);
    const done = await finished(invocation);
    expect(done.status, JSON.stringify(done.attempts)).to.equal('COMPLETED');
  });

  it('hides the service from another workspace: its deployment is refused, the model is not found', async () => {
    const refused = await priv.post('/api/deployment', { token: other, json: kserveDeployment(`other-${suffix}`) });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.message).to.contain(`names ${models}, which the platform's operator has not opened`);
    expect((await pub.post(`${modelPath}/session`, { token: other })).status).to.equal(404);
  });
});
