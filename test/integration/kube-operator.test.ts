import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { KubeConnection } from '../../infra/kube/connection.js';
import { configEntryKey, proxyConfigMapName } from '../../infra/kube/names.js';
import { API_VERSION, LABELS, MANAGED_BY } from '../../infra/kube/constants.js';
import { isNotFound } from '../../infra/kube/errors.js';
import { credentialsSecret, customResource, resourceRef, secretRef, type KubeObject } from '../../infra/kube/resources.js';
import type { DesiredDeployment } from '../../infra/kube/desired.js';
import { DesiredStateWriter } from '../../infra/kube/writer.js';
import { createLogger } from '../../infra/logging/logger.js';
import type { RunningOperator } from '../../operator/start.js';
import { startDemoModelServer } from '../support/fixtures.js';
import { kubectlApply, operatorEnv, startTestOperator, testNamespace, waitFor } from '../support/kube.js';

type Resource = KubeObject & { spec: any; status?: { observedGeneration?: number; conditions?: Array<{ type: string; status: string; reason: string; message: string }> } };

const PAT = 'operator-test-pat';
/** DIDYMA_PROXY_CONFIGMAP's default: the prefix of the per-workspace ConfigMaps, and the name of the single one of earlier versions. */
const CONFIG_MAP = 'didyma-proxy-config';
let counter = 0;

function deployment(url: string, secrets: Record<string, string> = { server_proxy_pat: PAT }, workspace = 'default'): DesiredDeployment {
  counter += 1;
  return {
    kind: 'deployment',
    workspace,
    key: `dep-${Date.now().toString(36)}-${counter}`,
    registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: url, tracking_server_url: url } },
    serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: url } },
    secrets,
    credentialsVersion: newVersion(),
  };
}

/** A version of credentials, as the private server names their Secret by. */
const newVersion = () => crypto.randomBytes(16).toString('hex');

/** A model server whose health checks can be made to hang: the operator is then caught in the middle of a reconcile. */
async function hangingServer() {
  const pending: http.ServerResponse[] = [];
  let hang = true;
  let probed: () => void = () => undefined;
  const firstProbe = new Promise<void>((resolve) => (probed = resolve));
  const server = http.createServer((req, res) => {
    if (hang) {
      pending.push(res);
      probed();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.includes('/health/') ? '{}' : '{"name":"x"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    firstProbe,
    recover() {
      hang = false;
      for (const res of pending.splice(0)) res.destroy();
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('Kubernetes: the operator', function () {
  this.timeout(120_000);
  let kube: KubeConnection;
  let writer: DesiredStateWriter;
  let operator: RunningOperator | undefined;
  let demo: Awaited<ReturnType<typeof startDemoModelServer>>;

  before(async () => {
    kube = await testNamespace('dy-operator');
    writer = new DesiredStateWriter(kube, createLogger('silent'));
    demo = await startDemoModelServer();
    operator = await startTestOperator(kube.namespace);
  });
  after(async () => {
    await operator?.close();
    await demo?.close();
  });

  const read = async (name: string) => (await kube.api()).objects.read<Resource>(resourceRef('deployment', kube.namespace, name));
  const secretExists = async (name: string) => (await kube.api()).objects.read(secretRef(kube.credentialsNamespace, name)).then(() => true, (error: unknown) => (isNotFound(error) ? false : Promise.reject(error)));
  const condition = (resource: Resource, type: string) => resource.status?.conditions?.find((c) => c.type === type);
  /** A workspace's proxy ConfigMap; none (deleted once empty) reads as empty. */
  const configMap = async (workspace = 'default') =>
    (await kube.api()).core.readNamespacedConfigMap({ name: proxyConfigMapName(CONFIG_MAP, workspace), namespace: kube.namespace }).catch((error: unknown) => {
      if (isNotFound(error)) return { data: {} as Record<string, string>, metadata: {} as V1ObjectMeta };
      throw error;
    });
  const eventsOf = async (name: string) => (await (await kube.api()).core.listNamespacedEvent({ namespace: kube.namespace, fieldSelector: `involvedObject.name=${name}` })).items;
  const untilCondition = (name: string, type: string, check: (c: { status: string; reason: string }) => boolean) =>
    waitFor(`${type} of ${name}`, async () => {
      const resource = await read(name);
      const found = condition(resource, type);
      return found && check(found) && resource.status?.observedGeneration === resource.metadata.generation ? resource : undefined;
    });

  it('reconciles a ModelDeployment to Ready and writes its proxy configuration, credentials referenced, never copied', async () => {
    const item = deployment(demo.url);
    const { metadata } = await writer.apply(item);
    const resource = await untilCondition(metadata.name, 'Ready', (c) => c.status === 'True');
    expect(condition(resource, 'Ready')).to.include({ reason: 'Configured' });
    expect(condition(resource, 'Reachable')).to.include({ status: 'True', reason: 'HealthChecksPassed' });
    expect(resource.metadata.finalizers).to.include('didyma.io/proxy-configuration');
    const text = (await configMap()).data?.[configEntryKey('deployment', metadata.name)];
    expect(JSON.parse(text!)).to.deep.equal({
      kind: 'ModelDeployment',
      workspace: 'default',
      key: item.key,
      registry: item.registry,
      serverProxy: item.serverProxy,
      secretRef: { name: credentialsSecret(item, kube.credentialsNamespace)!.metadata.name },
    });
    expect(JSON.stringify(await configMap())).to.not.include(PAT);
    expect((await eventsOf(metadata.name)).map((e) => `${e.type}/${e.reason}`)).to.include('Normal/Configured');
  });

  it('changes nothing when it reconciles again (a restarted operator re-lists everything)', async () => {
    const { metadata } = await writer.apply(deployment(demo.url));
    await untilCondition(metadata.name, 'Ready', (c) => c.status === 'True');
    const before = { resource: (await read(metadata.name)).metadata.resourceVersion, configMap: (await configMap()).metadata?.resourceVersion, events: (await eventsOf(metadata.name)).length };
    await operator!.close();
    operator = await startTestOperator(kube.namespace);
    const ready = (await (await kube.api()).list<Resource>(API_VERSION, 'ModelDeployment', kube.namespace)).items.filter((r) => condition(r, 'Ready')?.status === 'True').length;
    await waitFor('the new operator to reconcile every ready resource', async () => {
      const text = await (await fetch(`${operator!.url}/metrics`)).text();
      const count = /didyma_operator_reconciles_total\{kind="ModelDeployment",result="ready"\} (\d+)/.exec(text)?.[1];
      return Number(count ?? 0) >= ready;
    });
    expect((await read(metadata.name)).metadata.resourceVersion).to.equal(before.resource);
    expect((await configMap()).metadata?.resourceVersion).to.equal(before.configMap);
    expect((await eventsOf(metadata.name)).length).to.equal(before.events);
  });

  it('reports an unreachable model server as a condition with a reason, and an Event', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const { metadata } = await writer.apply(deployment(url));
    const resource = await untilCondition(metadata.name, 'Reachable', (c) => c.status === 'False');
    expect(condition(resource, 'Reachable')).to.include({ reason: 'ServerUnreachable' });
    expect(condition(resource, 'Reachable')!.message).to.include('could not be reached');
    expect(condition(resource, 'Ready')).to.include({ status: 'False', reason: 'Unreachable' });
    // The configuration is in place all the same: executors retry, and it works as soon as the server is back.
    expect((await configMap()).data).to.have.property(configEntryKey('deployment', metadata.name));
    await waitFor('a Warning event', async () => (await eventsOf(metadata.name)).some((e) => e.type === 'Warning' && e.reason === 'Unreachable'));
  });

  it('refuses a class it does not know and removes the configuration', async () => {
    const item = deployment(demo.url, {});
    const object = customResource(item, kube.namespace);
    (object.spec as any).serverProxy.className = 'didyma.proxy.NoSuchProxy';
    await kubectlApply(kube, object);
    const resource = await untilCondition(object.metadata.name, 'Ready', (c) => c.reason === 'InvalidClass');
    expect(condition(resource, 'Ready')!.message).to.include('didyma.proxy.OpenInferenceServerProxy');
    expect(condition(resource, 'Reachable')).to.include({ status: 'Unknown', reason: 'NotProbed' });
    expect((await configMap()).data ?? {}).to.not.have.property(configEntryKey('deployment', object.metadata.name));
  });

  it('waits for a missing Secret, then converges once it exists', async () => {
    const item = deployment(demo.url);
    const object = customResource(item, kube.namespace);
    await kubectlApply(kube, object);
    await untilCondition(object.metadata.name, 'Ready', (c) => c.reason === 'SecretMissing');
    await writer.apply(item); // writes the Secret
    await untilCondition(object.metadata.name, 'Ready', (c) => c.status === 'True');
  });

  it('reconciles a resource again as soon as its Secret is fixed, with no retry of its own to wait for', async () => {
    // Ready resources are probed hourly, and an invalid one is never retried: only the Secret's change can bring it back.
    await operator!.close();
    operator = await startTestOperator(kube.namespace, { DIDYMA_OPERATOR_PROBE_SECONDS: '3600' });
    const { metadata } = await writer.apply(deployment(demo.url, { server_proxy_pat: 'not a token' }));
    const invalid = await untilCondition(metadata.name, 'Ready', (c) => c.reason === 'InvalidInit');
    expect(condition(invalid, 'Ready')!.message).to.include('server_proxy_pat');
    // The Secret is immutable: an administrator fixes it by making it anew under its name.
    const api = await kube.api();
    const broken = await api.objects.read<KubeObject>(secretRef(kube.credentialsNamespace, invalid.spec.secretRef.name));
    await api.delete(broken);
    await waitFor('the broken Secret to be gone', () => api.objects.read(broken).then(() => false, isNotFound));
    await api.objects.create({ ...secretRef(kube.credentialsNamespace, broken.metadata.name), metadata: { name: broken.metadata.name, namespace: kube.credentialsNamespace, labels: broken.metadata.labels }, immutable: true, data: { server_proxy_pat: Buffer.from(PAT).toString('base64') } } as KubeObject);
    await waitFor('Ready right after the Secret was fixed', async () => condition(await read(metadata.name), 'Ready')?.status === 'True', 10_000);
  });

  it('converges again after being killed in the middle of a reconcile', async function () {
    await operator!.close();
    operator = undefined;
    const server = await hangingServer();
    let child: ChildProcess | undefined;
    let output = '';
    try {
      const { metadata } = await writer.apply(deployment(server.url));
      child = spawn(process.execPath, ['--import', 'tsx', 'cli/entry.ts', 'operator'], {
        env: { ...process.env, ...operatorEnv(kube.namespace, { DIDYMA_UPSTREAM_TIMEOUT_MS: '60000', DIDYMA_LOG_LEVEL: 'info' }) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await Promise.race([server.firstProbe, new Promise((_, reject) => setTimeout(() => reject(new Error(`the operator never probed:\n${output.slice(-3000)}`)), 60_000))]);
      // Mid-reconcile: finalizer on and configuration written, but no status yet.
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
      const interrupted = await read(metadata.name);
      expect(interrupted.metadata.finalizers).to.include('didyma.io/proxy-configuration');
      expect(interrupted.status?.conditions ?? []).to.deep.equal([]);

      server.recover();
      // A new operator waits for the dead one's lease to expire, then picks the resource up.
      operator = await startTestOperator(kube.namespace);
      await untilCondition(metadata.name, 'Ready', (c) => c.status === 'True');
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      await server.close();
    }
  });

  it('elects one leader among replicas; a standby takes over when the leader goes', async () => {
    const standby = await startTestOperator(kube.namespace);
    const replicas = [operator!, standby];
    try {
      await waitFor('one leader', async () => [operator!, standby].filter((o) => o.isLeader()).length === 1);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect([operator!, standby].filter((o) => o.isLeader())).to.have.length(1);
      const leader = replicas.find((o) => o.isLeader())!;
      const other = replicas.find((o) => o !== leader)!;
      await leader.close();
      replicas.splice(replicas.indexOf(leader), 1);
      operator = other;
      await waitFor('the standby to lead', async () => other.isLeader());
      const { metadata } = await writer.apply(deployment(demo.url));
      await untilCondition(metadata.name, 'Ready', (c) => c.status === 'True');
    } finally {
      // The survivor stays on as `operator` for the next tests.
      for (const replica of replicas) if (replica !== operator) await replica.close();
    }
  });

  it('serves /healthz and /metrics', async () => {
    expect((await fetch(`${operator!.url}/healthz`)).status).to.equal(200);
    const metrics = await (await fetch(`${operator!.url}/metrics`)).text();
    expect(metrics).to.include('didyma_operator_reconcile_duration_seconds');
    expect(metrics).to.match(/didyma_operator_leader 1/);
  });

  it('keeps a workspace in a ConfigMap of its own, deletes it with its last entry, and removes the single ConfigMap of earlier versions', async () => {
    const api = await kube.api();
    // What an earlier version left behind: one ConfigMap named DIDYMA_PROXY_CONFIGMAP, without the label executors select by.
    await api.core.createNamespacedConfigMap({ namespace: kube.namespace, body: { metadata: { name: CONFIG_MAP }, data: { 'mdep.old': '{}' } } });
    const { metadata } = await writer.apply(deployment(demo.url, undefined, 'team-a'));
    await untilCondition(metadata.name, 'Ready', (c) => c.status === 'True');
    const own = await configMap('team-a');
    expect(own.metadata?.labels).to.include({ 'didyma.io/proxy-config': CONFIG_MAP, 'didyma.io/workspace': 'team-a' });
    expect(Object.keys(own.data ?? {})).to.deep.equal([configEntryKey('deployment', metadata.name)]);
    expect((await configMap()).data ?? {}).to.not.have.property(configEntryKey('deployment', metadata.name));

    // A new leader deletes the old ConfigMap (the chart no longer renders it either).
    await operator!.close();
    operator = await startTestOperator(kube.namespace);
    await waitFor('the ConfigMap of earlier versions to be gone', () => api.core.readNamespacedConfigMap({ name: CONFIG_MAP, namespace: kube.namespace }).then(() => false, isNotFound));

    await api.delete(resourceRef('deployment', kube.namespace, metadata.name));
    await waitFor("the workspace's ConfigMap to go with its last entry", () =>
      api.core.readNamespacedConfigMap({ name: proxyConfigMapName(CONFIG_MAP, 'team-a'), namespace: kube.namespace }).then(() => false, isNotFound),
    );
  });

  it('removes the configuration and the credentials of a resource deleted with kubectl (finalizer)', async () => {
    const item = deployment(demo.url);
    const { metadata } = await writer.apply(item);
    await untilCondition(metadata.name, 'Ready', (c) => c.status === 'True');
    await (await kube.api()).delete(resourceRef('deployment', kube.namespace, metadata.name));
    await waitFor('the resource to be gone', () => read(metadata.name).then(() => false, isNotFound));
    expect((await configMap()).data ?? {}).to.not.have.property(configEntryKey('deployment', metadata.name));
    expect(await secretExists(credentialsSecret(item, kube.credentialsNamespace)!.metadata.name), 'its Secret, deleted before the finalizer let go').to.equal(false);
  });

  it('deletes the credentials Secrets no resource names once past their grace period: a superseded version, a stray, the one Secret of earlier versions', async () => {
    await operator!.close();
    operator = await startTestOperator(kube.namespace, { DIDYMA_OPERATOR_SECRET_GRACE_SECONDS: '2' });
    const first = deployment(demo.url);
    const { metadata } = await writer.apply(first);
    await untilCondition(metadata.name, 'Ready', (c) => c.status === 'True');
    // New credentials: the private server creates their Secret and names it in the resource.
    const rotated = { ...first, credentialsVersion: newVersion() };
    await writer.apply(rotated);
    const [oldName, newName] = [first, rotated].map((item) => credentialsSecret(item, kube.credentialsNamespace)!.metadata.name) as [string, string];
    // A version created for an apply that never came, and the single Secret an earlier version of the platform kept per resource.
    const stray = credentialsSecret({ ...first, credentialsVersion: newVersion() }, kube.credentialsNamespace)!;
    const unversioned = { ...secretRef(kube.credentialsNamespace, `${metadata.name}-credentials`), metadata: { name: `${metadata.name}-credentials`, namespace: kube.credentialsNamespace, labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.kind]: 'deployment' } }, data: {} } as KubeObject;
    const unrelated = { ...secretRef(kube.credentialsNamespace, `${metadata.name}-not-ours`), metadata: { name: `${metadata.name}-not-ours`, namespace: kube.credentialsNamespace }, data: {} } as KubeObject;
    const api = await kube.api();
    for (const secret of [stray, unversioned, unrelated]) await api.objects.create(secret);
    await waitFor('the superseded, stray and unversioned Secrets to be deleted', async () => !(await secretExists(oldName)) && !(await secretExists(stray.metadata.name)) && !(await secretExists(unversioned.metadata.name)), 30_000);
    expect(await secretExists(newName), 'the version the resource names').to.equal(true);
    expect(await secretExists(unrelated.metadata.name), 'a Secret the platform did not make').to.equal(true);
    expect(condition(await read(metadata.name), 'Ready')).to.include({ status: 'True' });
    await api.delete(unrelated);
  });
});

/** A model server that answers every health check and counts the requests it gets: the operator's probes. */
async function countingServer() {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.includes('/health/') ? '{}' : '{"name":"x"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('Kubernetes: the operator reconciles on spec changes only', function () {
  this.timeout(120_000);
  let kube: KubeConnection;
  let writer: DesiredStateWriter;
  let operator: RunningOperator | undefined;
  let server: Awaited<ReturnType<typeof countingServer>>;
  // Longer than the test: no periodic probe comes between the counts.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 2500));

  before(async () => {
    kube = await testNamespace('dy-opgen');
    writer = new DesiredStateWriter(kube, createLogger('silent'));
    server = await countingServer();
    operator = await startTestOperator(kube.namespace, { DIDYMA_OPERATOR_PROBE_SECONDS: '3600', DIDYMA_OPERATOR_WORKERS: '1' });
  });
  after(async () => {
    await operator?.close();
    await server?.close();
  });

  const read = async (name: string) => (await kube.api()).objects.read<Resource>(resourceRef('deployment', kube.namespace, name));
  const readyAt = (name: string, generation: number) =>
    waitFor(`${name} Ready at generation ${generation}`, async () => {
      const resource = await read(name);
      return resource.status?.observedGeneration === generation && resource.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? resource : undefined;
    });

  it('probes once per generation: its own finalizer and status writes, a status patch and a label change probe nothing', async () => {
    const item = deployment(server.url);
    const { metadata } = await writer.apply(item);
    await readyAt(metadata.name, 1);
    await settle();
    // One reconcile probes the registry and the model server, however many writes it made; on a loaded host a
    // probe that timed out is retried, so the first count is a floor, and what follows is counted from it.
    const oneRound = server.requests;
    expect(oneRound).to.be.at.least(1);

    const api = await kube.api();
    const target = { group: 'didyma.io', version: 'v1alpha1', plural: 'modeldeployments', namespace: kube.namespace, name: metadata.name };
    await api.patchStatus({ ...target, fieldManager: 'kubectl-test' }, { conditions: [...(await read(metadata.name)).status!.conditions!].reverse() });
    await api.mergePatch({ ...resourceRef('deployment', kube.namespace, metadata.name), metadata: { name: metadata.name, namespace: kube.namespace, labels: { team: 'ml' } } }, 'kubectl-test');
    await settle();
    expect(server.requests, 'probes after status and label writes').to.equal(oneRound);

    await writer.apply({ ...item, registry: { ...item.registry, init: { ...item.registry.init, tracking_server_url: `${server.url}/tracking` } } });
    await readyAt(metadata.name, 2);
    await settle();
    expect(server.requests, 'probes after a spec change').to.be.above(oneRound);
  });
});
