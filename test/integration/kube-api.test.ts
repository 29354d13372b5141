import { expect } from 'chai';
import type { KubeConnection } from '../../infra/kube/connection.js';
import { LABELS } from '../../infra/kube/constants.js';
import { configEntryKey, proxyConfigMapName, resourceName } from '../../infra/kube/names.js';
import type { KubeApi } from '../../infra/kube/api.js';
import { isNotFound } from '../../infra/kube/errors.js';
import { DesiredStateResync } from '../../platform/kube/resync.js';
import { Scheduler } from '../../infra/process/scheduler.js';
import { customResource, resourceRef, secretRef, type KubeObject } from '../../infra/kube/resources.js';
import type { RunningOperator } from '../../operator/start.js';
import { startTestPlatform, unique, type TestPlatform } from '../support/platform.js';
import { IRIS, OPEN_INFERENCE_PROXY, OPEN_INFERENCE_REGISTRY, filesystemStorage, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from '../support/fixtures.js';
import { startExecutor } from '../../executor/start.js';
import { ownDatabase } from '../support/database.js';
import { createTestNamespace, kubeOverrides, kubectlApply, startTestOperator, testNamespace, testNamespaceName, waitFor } from '../support/kube.js';

const PAT = 'pat-that-must-stay-in-the-secret';

type Resource = KubeObject & { spec: any; status?: any };

describe('Kubernetes: the reconciler writes the custom resources of committed rows', function () {
  this.timeout(120_000);
  let kube: KubeConnection;
  let api: KubeApi;
  let t: TestPlatform;
  let operator: RunningOperator;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let owner: Tenant;
  let own: Awaited<ReturnType<typeof ownDatabase>>;

  before(async () => {
    kube = await testNamespace('dy-api');
    api = await kube.api();
    // A database of its own: the resync below applies every live deployment of its database to this
    // namespace, and the shared one holds those of every earlier test file, whose endpoints are gone.
    own = await ownDatabase();
    t = await startTestPlatform(kubeOverrides(kube.namespace), undefined, { db: own.db });
    // No failover here: the default lease, so a loaded host's pauses never cost the operator its leadership.
    operator = await startTestOperator(kube.namespace, { DIDYMA_LEASE_SECONDS: '15' });
    demo = await startDemoModelServer();
    owner = await tenant(t);
  });
  after(async () => {
    await operator?.close();
    await demo?.close();
    await t?.close();
    await own?.drop();
  });

  const read = (kind: 'deployment' | 'storage', name: string) => api.objects.read<Resource>(resourceRef(kind, kube.namespace, name));
  /** The tenant's workspace's proxy ConfigMap; none (deleted once empty) reads as empty. */
  const proxyConfig = () =>
    api.core.readNamespacedConfigMap({ name: proxyConfigMapName('didyma-proxy-config', owner.ws.name), namespace: kube.namespace }).catch((error: unknown) => {
      if (isNotFound(error)) return { data: {} as Record<string, string> };
      throw error;
    });
  const gone = (ref: KubeObject) => api.objects.read(ref).then(() => false, isNotFound);
  // A finalizer is the operator's to remove: on a loaded host the operator may take a while, which these tests do not measure.
  const finalized = (what: string, ref: KubeObject) =>
    waitFor(`${what} to be gone`, () => gone(ref), 120_000).catch(async (error: Error) => {
      const left = await api.objects.read<Resource>(ref).catch(() => undefined);
      throw new Error(`${error.message}; operator leading: ${operator.isLeader()}; resource left: ${JSON.stringify(left?.metadata)}`);
    });

  async function createDeployment(key: string, client = t.private, token = owner.token) {
    return client.post('/api/deployment', {
      token,
      json: {
        deployment_key: key,
        registry_connector_class: OPEN_INFERENCE_REGISTRY,
        registry_connector_init: { model_registry_url: demo.url, tracking_server_url: demo.url },
        server_proxy_class: OPEN_INFERENCE_PROXY,
        server_proxy_init: { server_proxy_url: demo.url, server_proxy_pat: PAT },
      },
    });
  }

  /** What GET answers of the deployment once its cluster_state is `state`. */
  const deploymentIn = (state: string, key: string, client = t.private, token = owner.token) =>
    waitFor(`deployment ${key} to be ${state}`, async () => {
      const reply = await client.get(`/api/deployment/${key}`, { token });
      return reply.body[0]?.cluster_state === state ? reply.body[0] : undefined;
    });

  it('creating a deployment answers pending, then applies its ModelDeployment and Secret: right spec and labels, no credential in the CR', async () => {
    const key = unique('iris');
    const reply = await createDeployment(key);
    expect(reply.status, reply.text).to.equal(201);
    expect(reply.body[0]).to.include({ cluster_state: 'pending' });
    await deploymentIn('applied', key);
    const name = resourceName('deployment', owner.ws.name, key);
    const resource = await read('deployment', name);
    expect(resource.metadata.labels).to.include({ [LABELS.workspace]: owner.ws.name, [LABELS.managedBy]: 'didyma' });
    expect(resource.spec).to.deep.equal({
      workspace: owner.ws.name,
      deploymentKey: key,
      registry: { className: OPEN_INFERENCE_REGISTRY, init: { model_registry_url: demo.url, tracking_server_url: demo.url } },
      serverProxy: { className: OPEN_INFERENCE_PROXY, init: { server_proxy_url: demo.url } },
      secretRef: { name: resource.spec.secretRef.name },
    });
    expect(resource.spec.secretRef.name).to.match(new RegExp(`^${name}-credentials-[0-9a-f]{32}$`));
    expect(JSON.stringify(resource)).to.not.include(PAT);
    const secret = await api.core.readNamespacedSecret({ name: resource.spec.secretRef.name, namespace: kube.credentialsNamespace });
    expect(Buffer.from(secret.data!.server_proxy_pat!, 'base64').toString()).to.equal(PAT);
    expect(secret.metadata!.labels).to.include({ [LABELS.workspace]: owner.ws.name, [LABELS.kind]: 'deployment', [LABELS.resource]: name });
    expect(secret.immutable).to.equal(true);
  });

  it('deleting a deployment deletes its resource once the operator has removed its configuration (finalizer), and its Secret', async () => {
    const key = unique('doomed');
    expect((await createDeployment(key)).status).to.equal(201);
    const name = resourceName('deployment', owner.ws.name, key);
    const entry = configEntryKey('deployment', name);
    await waitFor('the operator to configure it', async () => {
      const resource = await read('deployment', name);
      const configMap = await proxyConfig();
      return resource.metadata.finalizers?.includes('didyma.io/proxy-configuration') && configMap.data?.[entry];
    });
    const secret = (await read('deployment', name)).spec.secretRef.name as string;
    const reply = await t.private.delete(`/api/deployment/${key}`, { token: owner.token });
    expect(reply.status).to.equal(204);
    await finalized('the ModelDeployment', resourceRef('deployment', kube.namespace, name));
    expect(await gone(secretRef(kube.credentialsNamespace, secret)), 'the finalizer deletes the Secret').to.equal(true);
    const configMap = await proxyConfig();
    expect(configMap.data ?? {}).to.not.have.property(entry);
  });

  it('creating and deleting a storage configuration applies and deletes its StorageConfig', async () => {
    const key = await filesystemStorage(t.private, owner.token, unique('files'));
    const name = resourceName('storage', owner.ws.name, key);
    await waitFor('the storage configuration to be applied', async () => (await t.private.get(`/api/storage/${key}`, { token: owner.token })).body.cluster_state === 'applied');
    const resource = await read('storage', name);
    expect(resource.spec).to.deep.include({ workspace: owner.ws.name, storageKey: key, className: 'didyma.storage.FilesystemStorage' });
    expect(resource.spec).to.not.have.property('secretRef');
    await waitFor('the StorageConfig to be Ready', async () => (await read('storage', name)).status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True');
    expect((await t.private.delete(`/api/storage/${key}`, { token: owner.token })).status).to.equal(204);
    await finalized('the StorageConfig', resourceRef('storage', kube.namespace, name));
  });

  it('a write the cluster refuses: 201 pending, then failed with the reason, then applied once the cluster takes it', async () => {
    // A namespace not created yet: the API server refuses every write into it (404).
    const namespace = testNamespaceName('dy-late');
    const late = await ownDatabase();
    const broken = await startTestPlatform({ ...kubeOverrides(namespace), kubeResyncSeconds: 1 }, undefined, { db: late.db });
    try {
      const lateOwner = await tenant(broken);
      const key = unique('refused');
      const reply = await createDeployment(key, broken.private, lateOwner.token);
      expect(reply.status, reply.text).to.equal(201);
      expect(reply.body[0]).to.include({ cluster_state: 'pending' });
      const failed = await deploymentIn('failed', key, broken.private, lateOwner.token);
      expect(failed).to.include({ cluster_reason: 'cluster_error' });
      expect(failed.cluster_message).to.include('404');
      const listed = await broken.private.get('/api/deployment', { token: lateOwner.token });
      expect(listed.body.find((d: any) => d.deployment_key === key)).to.include({ cluster_state: 'failed', cluster_reason: 'cluster_error' });
      // The cluster recovers: the next pass applies it.
      const created = await createTestNamespace(namespace);
      await deploymentIn('applied', key, broken.private, lateOwner.token);
      const name = resourceName('deployment', lateOwner.ws.name, key);
      expect((await (await created.api()).objects.read<Resource>(resourceRef('deployment', namespace, name))).spec.deploymentKey).to.equal(key);

      // A deletion the cluster cannot finish yet (a finalizer nobody removes: no operator watches this namespace) keeps being retried.
      const hold = 'didyma.io/test-hold';
      await api.mergePatch({ ...resourceRef('deployment', namespace, name), metadata: { name, namespace, finalizers: [hold] } });
      expect((await broken.private.delete(`/api/deployment/${key}`, { token: lateOwner.token })).status).to.equal(204);
      expect((await broken.private.get(`/api/deployment/${key}`, { token: lateOwner.token })).status).to.equal(404);
      const stateOfRow = async () => (await late.db('deployments').where({ deployment_key: key }).first('cluster_state')).cluster_state as string;
      const removingGauge = async () => (await broken.platform.metrics.cluster.registry.getSingleMetricAsString('didyma_cluster_resources')).includes('kind="deployment",state="removing"} 1');
      await waitFor('the resource to be marked for deletion', async () => (await api.objects.read<Resource>(resourceRef('deployment', namespace, name))).metadata.deletionTimestamp);
      await waitFor('a pass to count it as being removed', removingGauge);
      expect(await stateOfRow()).to.equal('applied');
      await api.mergePatch({ ...resourceRef('deployment', namespace, name), metadata: { name, namespace, finalizers: [] } });
      await waitFor('the row to say its resource is gone', async () => (await stateOfRow()) === 'removed');
      expect(await gone(resourceRef('deployment', namespace, name))).to.equal(true);
    } finally {
      await broken.close();
      await late.drop();
    }
  });

  it('the resync repairs drift: a deleted resource comes back, an edited spec is restored, a stray resource goes', async () => {
    const key = unique('drift');
    expect((await createDeployment(key)).status).to.equal(201);
    await deploymentIn('applied', key);
    const name = resourceName('deployment', owner.ws.name, key);
    // Someone edits the spec with kubectl…
    await api.mergePatch({ ...resourceRef('deployment', kube.namespace, name), spec: { serverProxy: { init: { server_proxy_url: 'http://elsewhere.example' } } } });
    // …and leaves a resource the database knows nothing about.
    const stray = customResource({ kind: 'deployment', workspace: owner.ws.name, key: unique('stray'), registry: { className: OPEN_INFERENCE_REGISTRY, init: {} }, serverProxy: { className: OPEN_INFERENCE_PROXY, init: {} }, secrets: {} }, kube.namespace);
    await kubectlApply(kube, stray);
    // A resync without grace period (the periodic one waits a minute before deleting strays).
    const { db, box, kube: side, logger } = t.platform;
    const resync = new DesiredStateResync({ db, box, kube: side!.connection, writer: side!.writer, logger, scheduler: new Scheduler(logger) }, { intervalMs: 0, graceMs: 0 });
    const report = await resync.runOnce();
    expect(report.failed).to.equal(0);
    expect((await read('deployment', name)).spec.serverProxy.init.server_proxy_url).to.equal(demo.url);
    await finalized('the stray resource', resourceRef('deployment', kube.namespace, stray.metadata.name));

    const deletedSecret = (await read('deployment', name)).spec.secretRef.name as string;
    await api.delete(resourceRef('deployment', kube.namespace, name));
    await finalized('the deleted resource', resourceRef('deployment', kube.namespace, name));
    // The operator's finalizer took the Secret with the resource; both come back from the database.
    expect(await gone(secretRef(kube.credentialsNamespace, deletedSecret))).to.equal(true);
    await resync.runOnce();
    const restored = await read('deployment', name);
    expect(restored.spec.deploymentKey).to.equal(key);
    const secret = await api.core.readNamespacedSecret({ name: restored.spec.secretRef.name, namespace: kube.credentialsNamespace });
    expect(Buffer.from(secret.data!.server_proxy_pat!, 'base64').toString()).to.equal(PAT);
    const again = await resync.runOnce();
    expect(again.applied).to.equal(0);
  });
});

/** A pass-through in front of a model server that counts inference calls. */
async function countingProxy(target: string) {
  const { default: http } = await import('node:http');
  let inferences = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.endsWith('/infer')) inferences += 1;
    const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get inferences() {
      return inferences;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('Kubernetes: executors run invocations with the operator\'s proxy configuration', function () {
  this.timeout(120_000);
  let kube: KubeConnection;
  let t: TestPlatform;
  let operator: RunningOperator;
  let executor: Awaited<ReturnType<typeof startExecutor>>;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;
  let first: Awaited<ReturnType<typeof countingProxy>>;
  let second: Awaited<ReturnType<typeof countingProxy>>;
  let owner: Tenant;
  let version: string;
  let deploymentName: string;
  let own: Awaited<ReturnType<typeof ownDatabase>>;

  before(async () => {
    kube = await testNamespace('dy-executor');
    // Its own database: the reconciler applies every live deployment of it to this namespace.
    own = await ownDatabase();
    t = await startTestPlatform(kubeOverrides(kube.namespace), undefined, { db: own.db });
    // No failover here: the default lease, so a loaded host's pauses never cost the operator its leadership.
    operator = await startTestOperator(kube.namespace, { DIDYMA_LEASE_SECONDS: '15' });
    version = unique('v');
    demo = await startDemoModelServer(version);
    first = await countingProxy(demo.url);
    second = await countingProxy(demo.url);
    owner = await tenant(t);
    const key = unique('served');
    const created = await t.private.post('/api/deployment', {
      token: owner.token,
      json: {
        deployment_key: key,
        registry_connector_class: OPEN_INFERENCE_REGISTRY,
        registry_connector_init: { model_registry_url: demo.url, tracking_server_url: demo.url },
        server_proxy_class: OPEN_INFERENCE_PROXY,
        server_proxy_init: { server_proxy_url: first.url },
      },
    });
    expect(created.status, created.text).to.equal(201);
    deploymentName = resourceName('deployment', owner.ws.name, key);
    const storage = await filesystemStorage(t.private, owner.token);
    const card = await upload(t.private, owner.token, storage, '# Iris card');
    const registered = await t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    executor = await startExecutor(t.platform);
  });
  after(async () => {
    await executor?.close();
    await operator?.close();
    await Promise.all([first?.close(), second?.close(), demo?.close()]);
    await t?.close();
    await own?.drop();
  });

  async function invoke(): Promise<string> {
    const base = `/api/model/iris-classifier/version/${version}`;
    const session = (await t.public.post(`${base}/session`, { token: owner.token })).body.id as string;
    const created = await t.public.post(`${base}/session/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', order: 0, request: { type: 'FEATURES', body: IRIS } } });
    expect(created.status, created.text).to.equal(201);
    const done = await waitFor('the invocation to finish', async () => {
      const reply = await t.public.get(`${base}/session/${session}/invocation/${created.body.id}`, { token: owner.token });
      return ['COMPLETED', 'ERROR'].includes(reply.body.status) ? reply.body : undefined;
    });
    return done.status as string;
  }

  it('runs an invocation through the server named in the ConfigMap, and follows a change without restart', async () => {
    const entry = configEntryKey('deployment', deploymentName);
    const entryUrl = async () => {
      const configMap = await (await kube.api()).core.readNamespacedConfigMap({ name: proxyConfigMapName('didyma-proxy-config', owner.ws.name), namespace: kube.namespace }).catch(() => undefined);
      const text = configMap?.data?.[entry];
      return text ? (JSON.parse(text).serverProxy.init.server_proxy_url as string) : undefined;
    };
    await waitFor('the operator to write the entry', async () => (await entryUrl()) === first.url);
    expect(await invoke()).to.equal('COMPLETED');
    expect([first.inferences, second.inferences]).to.deep.equal([1, 0]);

    // Someone points the resource at another server; the operator rewrites the entry, the executor follows.
    await (await kube.api()).mergePatch({ ...resourceRef('deployment', kube.namespace, deploymentName), spec: { serverProxy: { init: { server_proxy_url: second.url } } } });
    await waitFor('the entry to change', async () => (await entryUrl()) === second.url);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await invoke()).to.equal('COMPLETED');
    expect([first.inferences, second.inferences]).to.deep.equal([1, 1]);
  });
});
