import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, type Reply } from '../support/http.js';
import { emptyAndRemoveBucket, s3Admin } from '../support/s3-admin.js';
import { IRIS, modelPayload, upload } from '../support/fixtures.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { credentialsNamespaceOf, waitFor } from '../support/kube.js';
import { lineage, modelCallsOf, runsOf, tag, traceOf } from '../support/jaeger.js';
import { freshTestNamespace, helm, hostDatabaseSecret, hostServiceValues, invitedSupervisor, createHostDatabase, dropHostDatabase, hostServices, imageValues, importProjectImage, kubectl, kubectlApply, kubectlJson, NODE_VALUES, portForward, runningCluster, serviceClient, type Cluster } from '../support/cluster.js';

const CHART = 'charts/didyma';
// The README's release name: its Services are didyma-auth, didyma-private and didyma-public.
const RELEASE = 'didyma';
const PASSWORD = 'Cluster-Pass-42';
const COMPONENTS = ['auth', 'private', 'public', 'executor', 'operator'];
const DEMO_PORT = 8090;
// The fair-share test's two workspaces, each with a slow demo model server of its own serving its models under the workspace's name as version.
const FAIR = ['flood', 'quiet'] as const;
const FAIR_DELAY_MS = 100;
const FLOOD = 400;
const WORKLOAD_ACCOUNT = 'workload';

/**
 * What the workload pod runs: its projected token exchanged at the auth
 * Service (RFC 8693), then the public API's model list with the access token.
 */
const WORKLOAD_SCRIPT = `
const token = require('node:fs').readFileSync('/var/run/secrets/didyma/token', 'utf8');
(async () => {
  const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: token, subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' });
  const exchanged = await fetch('http://${RELEASE}-auth:8080/o/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
  const answer = await exchanged.json();
  console.log('exchange', exchanged.status, answer.scope ?? answer.error_description);
  if (!exchanged.ok) process.exit(1);
  const models = await fetch('http://${RELEASE}-public:8082/api/model', { headers: { authorization: 'Bearer ' + answer.access_token } });
  console.log('models', models.status);
  process.exit(models.ok ? 0 : 1);
})();
`;

/**
 * The chart installed with `helm install` on the real single-node cluster of
 * scripts/services/cluster.sh, every process a pod of the image built from
 * the Dockerfile's recipe, the host's PostgreSQL, RabbitMQ, MinIO and
 * Prometheus reached through Services without selectors.
 */
describe('Cluster: helm install, the walkthrough through the Services, upgrades and failures', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-e2e-${suffix}`;
  // The chart's default: where the API writes tenant credentials.
  const credentials = credentialsNamespaceOf(namespace);
  const database = `didyma_e2e_${suffix}`;
  const queue = `didyma.e2e.${suffix}`;
  const bucket = `dy-e2e-${suffix}`;
  let cluster: Cluster;
  let image: string;
  let token: string;
  let auth: Client;
  let priv: Client;
  let pub: Client;
  let model: string;
  let session: string;

  const valueArgs = (): string[] =>
    [
      ...imageValues('image', image),
      // Bring your own: the database URL from a Secret of the user's, the queue's as a value.
      ...hostServiceValues(queue, PASSWORD),
      // Every pod exports its spans to the host's Jaeger; they leave within a fifth of a second.
      'tracing.otlpEndpoint=http://jaeger:4318',
      'config.extraEnv.OTEL_BSP_SCHEDULE_DELAY=200',
      // Workload identity: the pods of ServiceAccount `workload` exchange their tokens for the default workspace.
      `workloadIdentity.serviceAccounts[0].namespace=${namespace}`,
      `workloadIdentity.serviceAccounts[0].service_account=${WORKLOAD_ACCOUNT}`,
      'workloadIdentity.serviceAccounts[0].workspace=default',
      ...NODE_VALUES,
    ].flatMap((value) => ['--set', value]);

  const componentClient = (component: string, port: number): Promise<Client> => serviceClient(cluster, namespace, `${RELEASE}-${component}`, port);

  /** This release's scrape targets for the host's Prometheus (scripts/services/prometheus.sh reads targets.d). */
  const scrapeTargets = () => path.join(path.dirname(requireEnv('TEST_PROMETHEUS_TARGETS_FILE', 'prometheus')), 'targets.d', `${namespace}.json`);
  const podsOf = async (component: string): Promise<any[]> =>
    (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=${component}`)).items.filter(
      (pod: any) => !pod.metadata.deletionTimestamp,
    );

  const ready = (pod: any): boolean => pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ?? false;

  /** An S3 storage configuration `cards` on the suite's bucket, for model cards. */
  const cardStorage = () => ({
    storage_key: 'cards',
    storage_class: 'didyma.storage.S3Storage',
    connector_init: { endpoint: 'http://minio:9000', bucket_name: bucket, access_key: requireEnv('TEST_S3_ACCESS_KEY', 'minio'), secret_key: requireEnv('TEST_S3_SECRET_KEY', 'minio') },
  });

  /** A deployment whose registry and server are the demo model server at `url`. */
  const demoDeployment = (key: string, url: string) => ({
    deployment_key: key,
    registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
    registry_connector_init: { model_registry_url: url, tracking_server_url: url },
    server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
    server_proxy_init: { server_proxy_url: url },
  });

  const eventually = <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> => waitFor(what, check, timeoutMs, 250);

  /** Queues a prediction through the public Service; its invocation id. */
  const predict = async (): Promise<string> => {
    const reply: Reply = await pub.post(`${model}/session/${session}/invocation`, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(reply.status, reply.text).to.equal(201);
    return reply.body.id;
  };

  /** Status checks sent at once: well under the servers' in-flight limit (DIDYMA_MAX_IN_FLIGHT, 256). */
  const CHECKS_AT_ONCE = 32;

  /** Waits until every invocation id finished; returns their statuses. */
  async function finished(ids: string[]): Promise<string[]> {
    let last: string[] = [];
    return eventually(`${ids.length} invocations to finish`, async () => {
      // In slices: hundreds of requests at once would pass the server's in-flight limit and be shed (503, no status).
      last = [];
      for (let at = 0; at < ids.length; at += CHECKS_AT_ONCE) {
        last.push(...(await Promise.all(ids.slice(at, at + CHECKS_AT_ONCE).map(async (id) => (await pub.get(`${model}/session/${session}/invocation/${id}/check_progress`, { token })).body.status as string))));
      }
      return last.every((status) => ['COMPLETED', 'ERROR'].includes(status)) && last;
    }, 240_000).catch(async (error: Error) => {
      // What the executors were doing when the wait ran out: their pods, restarts and last log lines.
      const counts = last.reduce<Record<string, number>>((by, status) => ({ ...by, [status]: (by[status] ?? 0) + 1 }), {});
      const pods = (await podsOf('executor')).map((pod) => `${pod.metadata.name} ${pod.status.phase} restarts=${pod.status.containerStatuses?.[0]?.restartCount}`);
      const logs = await kubectl(cluster, '-n', namespace, 'logs', '--tail=20', '-l', `app.kubernetes.io/component=executor`).catch((e: Error) => e.message);
      throw new Error(`${error.message}; statuses ${JSON.stringify(counts)}; executor pods ${JSON.stringify(pods)}; their last lines:\n${String(logs).slice(-4000)}`);
    });
  }

  before(async () => {
    cluster = runningCluster();
    image = importProjectImage(cluster);
    await createHostDatabase(database);
    await s3Admin().makeBucket(bucket);

    await freshTestNamespace(cluster, namespace);
    await kubectlApply(cluster, [
      ...hostServices(cluster, namespace, ['postgresql', 'rabbitmq', 'minio', 'prometheus', 'jaeger']),
      hostDatabaseSecret(namespace, database),
    ]);
    // The demo model server as the README starts it.
    await kubectl(cluster, '-n', namespace, 'create', 'deployment', 'demo-model', `--image=${image}`, `--port=${DEMO_PORT}`, '--', 'node', 'bin/didyma.js', 'demo-model-server', '--port', String(DEMO_PORT));
    await kubectl(cluster, '-n', namespace, 'expose', 'deployment', 'demo-model');
    // Started here so they are up by the time the fair-share test needs them.
    for (const workspace of FAIR) {
      const name = `demo-model-${workspace}`;
      await kubectl(cluster, '-n', namespace, 'create', 'deployment', name, `--image=${image}`, `--port=${DEMO_PORT}`, '--', 'node', 'bin/didyma.js', 'demo-model-server', '--port', String(DEMO_PORT), '--version', workspace, '--delay-ms', String(FAIR_DELAY_MS));
      await kubectl(cluster, '-n', namespace, 'expose', 'deployment', name);
    }
  });

  after(async () => {
    if (!cluster) return;
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, credentials, '--wait=false', '--ignore-not-found').catch(() => undefined);
    await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queue);
    fs.rmSync(scrapeTargets(), { force: true });
    await dropHostDatabase(database).catch(() => undefined);
    await emptyAndRemoveBucket(s3Admin(), bucket).catch(() => undefined);
  });

  it('helm install: the migration hook completes, then auth, private, public, executor and operator run as Ready pods', async () => {
    // --wait: helm fails unless the pre-install hook Job succeeded and every Deployment is available.
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...valueArgs(), '--wait', '--timeout', '5m');
    expect(JSON.parse(await helm(cluster, '-n', namespace, 'status', RELEASE, '-o', 'json')).info.status).to.equal('deployed');
    for (const component of COMPONENTS) {
      const pods = await podsOf(component);
      expect(pods, component).to.have.length(1);
      expect(ready(pods[0]), `${component} pod Ready`).to.equal(true);
      expect(pods[0].spec.containers[0].image).to.equal(image);
    }
    // The bootstrap step of the hook made the first staff user.
    auth = await componentClient('auth', 8080);
    priv = await componentClient('private', 8081);
    pub = await componentClient('public', 8082);
    const login = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(login.status, login.text).to.equal(200);
    token = login.body.access;
  });

  it('helm test: a pod of the image logs in and reads a list from each API server through its Service, and goes when it passed', async () => {
    const output = await helm(cluster, 'test', RELEASE, '-n', namespace, '--timeout', '3m').catch(async (error: Error) => {
      const log = await kubectl(cluster, '-n', namespace, 'logs', `${RELEASE}-test`).catch((e: Error) => e.message);
      throw new Error(`${error.message}\nthe test pod's log:\n${log}`);
    });
    expect(output).to.match(new RegExp(`TEST SUITE:\\s+${RELEASE}-test\\n[\\s\\S]*Phase:\\s+Succeeded`));
    expect(await kubectl(cluster, '-n', namespace, 'get', 'pods', '-o', 'name')).to.not.include(`pod/${RELEASE}-test`);
  });

  it('lets no ServiceAccount read a Secret of the release namespace, and each do exactly its part with the credentials (kubectl auth can-i)', async () => {
    const canI = async (serviceAccount: string, verb: string, resource: string, where: string): Promise<boolean> => {
      const answer = await kubectl(cluster, 'auth', 'can-i', verb, resource, '-n', where, `--as=system:serviceaccount:${namespace}:${RELEASE}-${serviceAccount}`).catch((error: Error) => error.message);
      if (/^yes\b/m.test(answer)) return true;
      if (/^no\b/m.test(answer)) return false;
      throw new Error(`kubectl auth can-i ${verb} ${resource} -n ${where} as ${serviceAccount}: ${answer}`);
    };
    const verbs = ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'];
    // The private server creates tenants' credentials and nothing else: never a read, nor a patch or delete, whose answer would be a Secret (platform/kube/resync.ts knows them by their resources); the operator deletes the versions no resource names.
    const needs: Record<string, string[]> = { api: ['create'], executor: ['get'], operator: ['get', 'list', 'watch', 'delete'], server: [], auth: [] };
    const granted: Record<string, string[]> = {};
    for (const account of Object.keys(needs)) {
      for (const [verb, resource] of [['get', `secrets/${RELEASE}`], ['get', 'secrets'], ['list', 'secrets'], ['watch', 'secrets']]) {
        expect(await canI(account, verb!, resource!, namespace), `${account} may ${verb} ${resource} in the release namespace`).to.equal(false);
      }
      granted[account] = [];
      for (const verb of verbs) if (await canI(account, verb, 'secrets', credentials)) granted[account]!.push(verb);
    }
    expect(granted).to.deep.equal(needs);
    for (const verb of ['get', 'list', 'watch']) {
      const anywhere = await kubectl(cluster, 'auth', 'can-i', verb, 'secrets', '--all-namespaces', `--as=system:serviceaccount:${namespace}:${RELEASE}-api`).catch((error: Error) => error.message);
      expect(anywhere, `api may ${verb} secrets in some namespace`).to.match(/^no\b/m);
    }
    // Reviewing workloads' tokens is the auth server's alone (workloadIdentity.serviceAccounts is set).
    for (const account of Object.keys(needs)) expect(await canI(account, 'create', 'tokenreviews.authentication.k8s.io', namespace), `${account} may create tokenreviews`).to.equal(account === 'auth');
  });

  it('a pod exchanges its projected ServiceAccount token (audience didyma) at the auth Service and calls the public API with the answer', async () => {
    await kubectl(cluster, '-n', namespace, 'create', 'serviceaccount', WORKLOAD_ACCOUNT);
    await kubectlApply(cluster, [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'workload', namespace },
        spec: {
          serviceAccountName: WORKLOAD_ACCOUNT,
          automountServiceAccountToken: false,
          restartPolicy: 'Never',
          containers: [{ name: 'exchange', image, imagePullPolicy: 'Never', command: ['node', '-e', WORKLOAD_SCRIPT], volumeMounts: [{ name: 'didyma-token', mountPath: '/var/run/secrets/didyma', readOnly: true }] }],
          volumes: [{ name: 'didyma-token', projected: { sources: [{ serviceAccountToken: { audience: 'didyma', expirationSeconds: 600, path: 'token' } }] } }],
        },
      },
    ]);
    const phase = await eventually('the workload pod to finish', async () => {
      const pod = await kubectlJson(cluster, '-n', namespace, 'get', 'pod', 'workload');
      return ['Succeeded', 'Failed'].includes(pod.status?.phase) && (pod.status.phase as string);
    });
    const log = await kubectl(cluster, '-n', namespace, 'logs', 'workload');
    // Gone before the uninstall test counts what the namespace holds.
    await kubectl(cluster, '-n', namespace, 'delete', 'pod/workload', `serviceaccount/${WORKLOAD_ACCOUNT}`, '--wait=false');
    expect(phase, log).to.equal('Succeeded');
    expect(log).to.match(/^exchange 200 user$/m);
    expect(log).to.match(/^models 200$/m);
  });

  it('REST registers a storage configuration and a deployment: kubectl get mdep,stcfg shows them Ready, the executor gets their proxy configuration', async () => {
    const storage = await priv.post('/api/storage', { token, json: cardStorage() });
    expect(storage.status, storage.text).to.equal(201);
    const demoUrl = `http://demo-model:${DEMO_PORT}`;
    const deployment = await priv.post('/api/deployment', { token, json: demoDeployment('demo', demoUrl) });
    expect(deployment.status, deployment.text).to.equal(201);

    const table = await eventually('mdep and stcfg Ready', async () => {
      const output = await kubectl(cluster, '-n', namespace, 'get', 'mdep,stcfg');
      return (output.match(/\bTrue\b/g) ?? []).length === 2 && output;
    });
    expect(table).to.match(/NAME\s+KEY\s+WORKSPACE\s+REGISTRY\s+PROXY\s+READY\s+AGE/);
    expect(table).to.match(/NAME\s+KEY\s+WORKSPACE\s+CLASS\s+READY\s+AGE/);
    expect(table).to.match(/\sdemo\s+default\s+didyma\.registry\.OpenInferenceRegistryConnector\s+didyma\.proxy\.OpenInferenceServerProxy\s+True\s/);
    expect(table).to.match(/\scards\s+default\s+didyma\.storage\.S3Storage\s+True\s/);
    // -o wide adds the Ready condition's reason.
    expect(await kubectl(cluster, '-n', namespace, 'get', 'mdep', '-o', 'wide')).to.match(/\sTrue\s+Configured\s/);

    // The operator's ConfigMaps (one per workspace), mounted by nothing but read live by the executor pod: they name the demo server.
    const proxyConfig = await kubectlJson(cluster, '-n', namespace, 'get', 'configmap', '-l', `didyma.io/proxy-config=${RELEASE}-proxy-config`);
    expect(JSON.stringify(proxyConfig.items.map((item: any) => item.data))).to.include(demoUrl);
    const [executor] = await podsOf('executor');
    expect(executor.spec.containers[0].env.find((e: any) => e.name === 'DIDYMA_PROXY_CONFIGMAP').value).to.equal(`${RELEASE}-proxy-config`);

    // The storage's credentials went to the credentials namespace; the release namespace holds Helm's records, the platform's keys and the user's own Secret.
    const secretsIn = async (where: string) => (await kubectlJson(cluster, '-n', where, 'get', 'secrets')).items.map((o: any) => o.metadata.name as string).filter((name: string) => !name.startsWith('sh.helm.release.'));
    expect((await secretsIn(namespace)).sort()).to.deep.equal([RELEASE, 'user-database'].sort());
    expect(await secretsIn(credentials)).to.have.length(1).and.to.satisfy((names: string[]) => /^default-cards-.*-credentials-[0-9a-f]{32}$/.test(names[0]!));
  });

  it('runs the README walkthrough through the Services: model → session → predict + explain → feedback → metrics', async () => {
    // Logging in through `kubectl port-forward`, as the README does without an Ingress.
    const forwarded = await portForward(cluster, namespace, `${RELEASE}-auth`, 8080);
    try {
      const login = await new Client(forwarded.url).post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
      expect(login.status, login.text).to.equal(200);
    } finally {
      forwarded.stop();
    }
    const card = await upload(priv, token, 'cards', '# Iris', 'iris.md');
    const registered = await priv.post('/api/platform_model', {
      token,
      json: modelPayload('iris-classifier', '1', card.file_id, {
        feedback_schema: { type: 'object', properties: { correct: { type: 'boolean' } }, required: ['correct'] },
        explainer: { ...modelPayload('iris-explainer', '1', card.file_id), need_context: true },
      }),
    });
    expect(registered.status, registered.text).to.equal(201);
    model = '/api/model/iris-classifier/version/1';
    session = (await pub.post(`${model}/session`, { token })).body.id;
    const traceId = crypto.randomBytes(16).toString('hex');
    const invocation = await pub.post(`${model}/session/${session}/invocation`, {
      token,
      headers: { traceparent: `00-${traceId}-${crypto.randomBytes(8).toString('hex')}-01` },
      json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS }, with_explanation: true },
    });
    expect(invocation.status, invocation.text).to.equal(201);
    const items = await eventually('the prediction and its explanation', async () => {
      const list = (await pub.get(`${model}/session/${session}/invocation`, { token })).body as any[];
      return list.length === 2 && list.every((x) => x.status === 'COMPLETED') && list;
    });
    expect(items.map((x) => x.type), 'newest first').to.deep.equal(['EXPLAIN', 'PREDICT']);
    // One trace through the pods: the public server's request, both runs in an executor pod and both model-server calls.
    const trace = await traceOf(traceId, (candidate) => runsOf(candidate).length === 2 && modelCallsOf(candidate).length === 2);
    const { service, parentOf, ancestorsOf } = lineage(trace);
    const [prediction, explanation] = ['PREDICT', 'EXPLAIN'].map((type) => runsOf(trace).find((span) => tag(span, 'didyma.invocation.type') === type)!);
    expect(tag(prediction!, 'didyma.invocation.id')).to.equal(invocation.body.id);
    expect([service(prediction!), service(explanation!)]).to.deep.equal(['didyma-executor', 'didyma-executor']);
    expect(parentOf(explanation!)?.spanID, 'the explanation run under the prediction run').to.equal(prediction!.spanID);
    expect(ancestorsOf(prediction!).map(service), 'the prediction run under the POST to the public server').to.include('didyma-public');
    for (const call of modelCallsOf(trace)) expect(ancestorsOf(call).map((span) => span.spanID), 'a model call within a run').to.satisfy((ids: string[]) => ids.includes(prediction!.spanID) || ids.includes(explanation!.spanID));
    const feedback = await pub.post(`${model}/session/${session}/invocation/${invocation.body.id}/feedback`, { token, json: { request: { body: JSON.stringify({ correct: true }) } } });
    expect(feedback.status, feedback.text).to.equal(201);
    const catalog = await priv.get('/api/metric', { token });
    expect(catalog.status, catalog.text).to.equal(200);
  });

  /**
   * A workspace made by the staff admin through the auth API, its supervisor
   * registered from an invitation, with iris-classifier under the workspace's
   * name on its own slow demo model server, and an OPEN session.
   */
  async function fairTenant(workspace: string) {
    const supervisor = await invitedSupervisor(auth, token, workspace, PASSWORD);

    const storage = await priv.post('/api/storage', { token: supervisor, json: cardStorage() });
    expect(storage.status, storage.text).to.equal(201);
    const deployment = await priv.post('/api/deployment', { token: supervisor, json: demoDeployment(`${workspace}-demo`, `http://demo-model-${workspace}:${DEMO_PORT}`) });
    expect(deployment.status, deployment.text).to.equal(201);
    // The executor calls a deployment only once the operator has put it in the proxy configuration.
    await eventually(`${workspace}'s mdep and stcfg Ready`, async () => {
      const resources = (await kubectlJson(cluster, '-n', namespace, 'get', 'mdep,stcfg')).items.filter((o: any) => o.metadata.name.startsWith(`${workspace}-`));
      return resources.length === 2 && resources.every(ready);
    });
    const card = await upload(priv, supervisor, 'cards', '# Iris', 'iris.md');
    const registeredModel = await priv.post('/api/platform_model', { token: supervisor, json: modelPayload('iris-classifier', workspace, card.file_id) });
    expect(registeredModel.status, registeredModel.text).to.equal(201);
    const modelPath = `/api/model/iris-classifier/version/${workspace}`;
    const opened = await pub.post(`${modelPath}/session`, { token: supervisor });
    expect(opened.status, opened.text).to.equal(201);
    const invocations = `${modelPath}/session/${opened.body.id}/invocation`;
    return {
      async predict(): Promise<string> {
        const reply = await pub.post(invocations, { token: supervisor, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
        expect(reply.status, reply.text).to.equal(201);
        return reply.body.id;
      },
      async status(id: string): Promise<string> {
        return (await pub.get(`${invocations}/${id}/check_progress`, { token: supervisor })).body.status;
      },
      async queued(): Promise<number> {
        const reply = await pub.get(`${invocations}?status=QUEUED&limit=1`, { token: supervisor });
        expect(reply.status, reply.text).to.equal(200);
        return Number(reply.headers.get('x-total-count'));
      },
    };
  }

  it('serves a quiet workspace’s prediction while another workspace still has most of its hundreds queued', async () => {
    const [flood, quiet] = await Promise.all([fairTenant(FAIR[0]), fairTenant(FAIR[1])]);
    // No executor while the flood is queued: on this shared node the API queues no faster than an executor drains, so no backlog would build.
    await kubectl(cluster, '-n', namespace, 'scale', 'deployment', `${RELEASE}-executor`, '--replicas=0');
    await eventually('no executor pod', async () => (await podsOf('executor')).length === 0);
    for (let sent = 0; sent < FLOOD; sent += 16) await Promise.all(Array.from({ length: Math.min(16, FLOOD - sent) }, () => flood.predict()));
    const id = await quiet.predict();
    await kubectl(cluster, '-n', namespace, 'scale', 'deployment', `${RELEASE}-executor`, '--replicas=1');
    const status = await eventually('the quiet workspace’s prediction to finish', async () => {
      const now = await quiet.status(id);
      return ['COMPLETED', 'ERROR'].includes(now) && now;
    }, 240_000);
    const queued = await flood.queued();
    expect(status).to.equal('COMPLETED');
    expect(queued, 'the flooding workspace’s predictions still queued when the quiet one’s completed').to.be.greaterThan(FLOOD / 2);
  });

  it('loses nothing when the executor pod is deleted mid-load', async () => {
    const [executor] = await podsOf('executor');
    const ids: string[] = [];
    const load = (async () => {
      for (let i = 0; i < 60; i++) ids.push(await predict());
    })();
    load.catch(() => undefined); // reported by the await below, even when the wait fails first
    await eventually('the load under way', async () => ids.length >= 10);
    await kubectl(cluster, '-n', namespace, 'delete', 'pod', executor.metadata.name, '--wait=false');
    await load;
    expect(await finished(ids)).to.deep.equal(ids.map(() => 'COMPLETED'));
    await eventually('a new executor pod Ready', async () => (await podsOf('executor')).some((pod) => pod.metadata.name !== executor.metadata.name && ready(pod)));
  });

  it('scales executors from zero on the invocations waiting, through the metrics adapter, and the replicas share the work', async () => {
    const hpa = ['executor.hpa.enabled=true', 'executor.hpa.minReplicas=0', 'executor.hpa.maxReplicas=2', 'executor.hpa.targetQueueDepthPerReplica=10', `executor.hpa.queueDepthSelector.didyma_release=${namespace}`];
    await helm(cluster, 'upgrade', RELEASE, CHART, '-n', namespace, ...valueArgs(), ...hpa.flatMap((value) => ['--set', value]), '--wait', '--timeout', '5m');
    // The host's Prometheus scrapes this release's private servers, which count the invocations waiting.
    const privates = (await podsOf('private')).map((pod) => `${pod.status.podIP}:9464`);
    fs.writeFileSync(scrapeTargets(), JSON.stringify([{ targets: privates, labels: { didyma_release: namespace } }]));
    const autoscalerName = `${RELEASE}-executor`;
    const spec = (await kubectlJson(cluster, '-n', namespace, 'get', 'hpa', autoscalerName)).spec;
    expect(spec.metrics[0].external.metric).to.deep.equal({ name: 'didyma_invocations_queued', selector: { matchLabels: { didyma_release: namespace } } });
    // Where the HPA itself brings them once the queue has stayed empty for its scale-down window.
    await kubectl(cluster, '-n', namespace, 'scale', 'deployment', autoscalerName, '--replicas=0');
    await eventually('no executor pod', async () => (await podsOf('executor')).length === 0);

    const waiting: string[] = [];
    for (let i = 0; i < 40; i++) waiting.push(await predict());
    const scaled = await eventually('the HPA to read the waiting invocations and want two executors', async () => {
      const status = (await kubectlJson(cluster, '-n', namespace, 'get', 'hpa', autoscalerName)).status;
      return status.desiredReplicas === 2 && status;
    });
    expect(scaled.conditions.find((c: any) => c.type === 'ScalingActive')?.status).to.equal('True');
    expect(await finished(waiting)).to.deep.equal(waiting.map(() => 'COMPLETED'));

    const executors = await eventually('two Ready executors', async () => {
      const pods = await podsOf('executor');
      return pods.length === 2 && pods.every(ready) && pods;
    }, 240_000);
    const shared: string[] = [];
    for (let i = 0; i < 40; i++) shared.push(await predict());
    expect(await finished(shared)).to.deep.equal(shared.map(() => 'COMPLETED'));
    for (const pod of executors) {
      // Nothing else scrapes the executors here: a first read shows their new series at zero (docs/metrics.md), the second their runs.
      await (await fetch(`http://${pod.status.podIP}:9464/metrics`)).text();
      const metrics = await (await fetch(`http://${pod.status.podIP}:9464/metrics`)).text();
      const runs = [...metrics.matchAll(/^didyma_invocations_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
      expect(runs, `invocations run by ${pod.metadata.name}`).to.be.greaterThan(0);
    }
  });

  it('helm upgrade with a changed value rolls every pod without losing queued invocations or refusing new ones', async () => {
    const before = new Map<string, string[]>();
    for (const component of COMPONENTS) before.set(component, (await podsOf(component)).map((pod) => pod.metadata.name));
    // No executor while these are queued: they wait in RabbitMQ through the roll.
    await kubectl(cluster, '-n', namespace, 'scale', 'deployment', `${RELEASE}-executor`, '--replicas=0');
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await predict());
    // More are sent all through the roll: the public Service keeps taking them while its pod is replaced.
    let rolling = true;
    const refused: string[] = [];
    const during = (async () => {
      while (rolling) {
        await predict().then(
          (id) => ids.push(id),
          (error: Error) => refused.push(error.message),
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await helm(cluster, 'upgrade', RELEASE, CHART, '-n', namespace, ...valueArgs(), '--set', 'config.logLevel=debug', '--wait', '--timeout', '5m');
    rolling = false;
    await during;
    expect(refused).to.deep.equal([]);
    expect(ids.length).to.be.greaterThan(20);
    expect(await finished(ids)).to.deep.equal(ids.map(() => 'COMPLETED'));
    for (const component of COMPONENTS) {
      const now = (await podsOf(component)).map((pod) => pod.metadata.name);
      expect(now.filter((name) => before.get(component)!.includes(name)), `${component} pods replaced`).to.deep.equal([]);
    }
  });

  it('helm uninstall leaves nothing behind but the kept Secret and the resources the API made, which can then go with their namespace', async () => {
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait', '--timeout', '3m');
    // The executor's pod may use its whole grace period (120 s) finishing its runs.
    const releasePods = async () => (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE}`)).items as any[];
    await eventually('the release pods gone', async () => (await releasePods()).length === 0, 240_000).catch(async (error: Error) => {
      const left = (await releasePods()).map((pod) => `${pod.metadata.name} (${pod.status?.phase}, deleted ${pod.metadata.deletionTimestamp ?? 'no'})`);
      throw new Error(`${error.message}; pods left: ${left.join(', ')}`);
    });
    const left = (await kubectlJson(cluster, '-n', namespace, 'get', 'deployments,replicasets,statefulsets,jobs,services,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets,horizontalpodautoscalers,ingresses,leases,mdep,stcfg')).items
      .map((o: any) => `${o.kind}/${o.metadata.name}`)
      .filter((name: string) => !/^(Service|EndpointSlice)\/(postgresql|rabbitmq|minio|prometheus|jaeger|demo-model)/.test(name) && !/^(Deployment|ReplicaSet)\/demo-model/.test(name))
      .filter((name: string) => !['ConfigMap/kube-root-ca.crt', 'ServiceAccount/default'].includes(name));
    // The Secret the user brought, the one the chart keeps (helm.sh/resource-policy: keep: the encryption key of
    // every stored credential), and what the API made: the users' resources (their credentials are in the kept credentials namespace).
    const kept = [
      /^Secret\/user-database$/,
      new RegExp(`^Secret/${RELEASE}$`),
      ...[['default', 'demo'], ...FAIR.map((workspace) => [workspace, `${workspace}-demo`])].flatMap(([workspace, deployment]) => [
        new RegExp(`^ModelDeployment/${workspace}-${deployment}-`),
        new RegExp(`^StorageConfig/${workspace}-cards-`),
      ]),
    ];
    expect(left.filter((name: string) => !kept.some((pattern) => pattern.test(name)))).to.deep.equal([]);
    expect(left).to.have.length(kept.length);
    // The cluster-wide grant of workload identity went with the release.
    expect(await kubectl(cluster, 'get', 'clusterroles,clusterrolebindings', '--field-selector', `metadata.name=${namespace}-${RELEASE}-auth`, '-o', 'name')).to.equal('');
    // Their credentials, in the kept credentials namespace.
    const credentialSecrets = (await kubectlJson(cluster, '-n', credentials, 'get', 'secrets', '-l', 'app.kubernetes.io/managed-by=didyma')).items.map((o: any) => o.metadata.name as string);
    expect(credentialSecrets.sort()).to.satisfy((names: string[]) => names.length === 1 + FAIR.length && names.every((name) => /-cards-.*-credentials-[0-9a-f]{32}$/.test(name)));
    await kubectl(cluster, 'delete', 'namespace', credentials, '--wait=false');
    // The uninstall hook took the operator's finalizers off: what is left can still go, with its namespace.
    await kubectl(cluster, 'delete', 'namespace', namespace, '--wait', '--timeout', '120s');
    expect(await kubectl(cluster, 'get', 'namespaces', '-o', 'name')).to.not.include(`namespace/${namespace}`);
  });
});
