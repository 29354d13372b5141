import { expect } from 'chai';
import { createLogger } from '../../infra/logging/logger.js';
import { KINDS } from '../../infra/kube/constants.js';
import { resourceName } from '../../infra/kube/names.js';
import { DesiredStateWriter } from '../../infra/kube/writer.js';
import { Scheduler } from '../../infra/process/scheduler.js';
import { ClusterWriteMetrics } from '../../features/metrics/cluster-metrics.js';
import { metricNames } from '../../features/metrics/names.js';
import { ownDatabase } from '../../test/support/database.js';
import { FILESYSTEM_STORAGE, OPEN_INFERENCE_PROXY, OPEN_INFERENCE_REGISTRY, tenant, type Tenant } from '../../test/support/fixtures.js';
import { MemoryCluster } from '../../test/support/memory-cluster.js';
import { startTestPlatform, unique, type TestPlatform } from '../../test/support/platform.js';
import { until } from '../../test/support/until.js';
import { DesiredStateResync } from './resync.js';

const PAT = 'a-pat-for-the-secret';

describe('the reconciler of custom resources: rows to the cluster, states back to the rows', () => {
  let own: Awaited<ReturnType<typeof ownDatabase>>;
  let t: TestPlatform;
  let owner: Tenant;
  let cluster: MemoryCluster;
  let metrics: ClusterWriteMetrics;
  const logger = createLogger('silent');

  before(async () => {
    // A database of its own: the reconciler reads every row of it.
    own = await ownDatabase();
    t = await startTestPlatform({}, undefined, { db: own.db });
    owner = await tenant(t);
  });
  after(async () => {
    await t?.close();
    await own?.drop();
  });
  beforeEach(() => {
    cluster = new MemoryCluster();
    metrics = new ClusterWriteMetrics();
  });

  const reconciler = (scheduler = new Scheduler(logger), wakeups?: (wake: () => void) => () => void) => {
    const kube = cluster.connection();
    return new DesiredStateResync({ db: own.db, box: t.platform.box, kube, writer: new DesiredStateWriter(kube, logger), logger, scheduler, observer: metrics, wakeups }, { intervalMs: 0, graceMs: 0 });
  };
  const row = (key: string) => own.db('deployments').where({ deployment_key: key }).first('cluster_state', 'cluster_reason', 'cluster_message', 'deleted_at');
  const nameOf = (key: string) => resourceName('deployment', owner.ws.name, key);
  /** The Secret the deployment's resource names. */
  const secretOf = (key: string) => {
    const resource = cluster.find(KINDS.deployment.kind, nameOf(key));
    return cluster.find('Secret', (resource?.spec as { secretRef?: { name: string } } | undefined)?.secretRef?.name ?? '');
  };
  const metric = async (name: string, labels: string) => (await metrics.registry.getSingleMetricAsString(name)).split('\n').find((line) => line.startsWith(`${name}{${labels}}`));

  async function createDeployment(key = unique('dep')): Promise<string> {
    const reply = await t.private.post('/api/deployment', {
      token: owner.token,
      json: {
        deployment_key: key,
        registry_connector_class: OPEN_INFERENCE_REGISTRY,
        registry_connector_init: { model_registry_url: 'http://registry.example', tracking_server_url: 'http://registry.example' },
        server_proxy_class: OPEN_INFERENCE_PROXY,
        server_proxy_init: { server_proxy_url: 'http://server.example', server_proxy_pat: PAT },
      },
    });
    expect(reply.status, reply.text).to.equal(201);
    return key;
  }

  it('applies a committed deployment: pending, then applied with its resource and Secret', async () => {
    const key = await createDeployment();
    expect(await row(key)).to.include({ cluster_state: 'pending', cluster_reason: null });
    const report = await reconciler().runOnce();
    expect(report).to.include({ failed: 0 });
    expect(await row(key)).to.include({ cluster_state: 'applied', cluster_reason: null, cluster_message: null });
    expect(cluster.find(KINDS.deployment.kind, nameOf(key))?.spec).to.include({ deploymentKey: key });
    expect(secretOf(key)).to.not.equal(undefined);
    // A second pass finds nothing to do.
    expect(await reconciler().runOnce()).to.include({ applied: 0, failed: 0 });
  });

  it('creates a Secret of their own for changed credentials and names it in the resource, leaving the old one to the operator', async () => {
    const key = await createDeployment();
    await reconciler().runOnce();
    const before = secretOf(key)!;
    const sealed = t.platform.box.sealJson({ server_proxy_pat: 'a-new-pat' });
    await own.db('deployments').where({ deployment_key: key }).update({ secrets_sealed: sealed });
    expect(await reconciler().runOnce()).to.include({ applied: 1, failed: 0 });
    const secret = secretOf(key)!;
    expect(secret.metadata.name).to.not.equal(before.metadata.name).and.not.include('a-new-pat');
    expect(Buffer.from((secret.data as Record<string, string>).server_proxy_pat!, 'base64').toString()).to.equal('a-new-pat');
    expect(cluster.find('Secret', before.metadata.name), 'the old version, until the operator collects it').to.not.equal(undefined);
    expect(await reconciler().runOnce()).to.include({ applied: 0, failed: 0 });
  });

  it('records a refused write as failed with its reason, counts it, and applies it once the cluster takes it', async () => {
    const key = await createDeployment();
    cluster.refuse = 403;
    const refused = await reconciler().runOnce();
    expect(refused.failed).to.be.greaterThan(0);
    const failed = await row(key);
    expect(failed).to.include({ cluster_state: 'failed', cluster_reason: 'cluster_error' });
    expect(failed.cluster_message).to.include('403').and.not.include(PAT);
    expect(await metric(metricNames.clusterWriteFailures, 'kind="deployment",operation="apply"')).to.match(/ [1-9]\d*$/);
    expect(await metric(metricNames.clusterResources, 'kind="deployment",state="failed"')).to.match(/ [1-9]\d*$/);
    cluster.refuse = undefined;
    await reconciler().runOnce();
    expect(await row(key)).to.include({ cluster_state: 'applied', cluster_reason: null, cluster_message: null });
  });

  it('fails a pass the cluster does not answer, and says so on the rows still pending', async () => {
    const key = await createDeployment();
    cluster.refuse = 'unreachable';
    let error: unknown;
    await reconciler()
      .runOnce()
      .catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(Error);
    expect(await row(key)).to.include({ cluster_state: 'failed', cluster_reason: 'cluster_unreachable' });
  });

  it('deletes the resource of a deleted deployment, keeping its state until the resource is gone', async () => {
    const key = await createDeployment();
    await reconciler().runOnce();
    // The operator's finalizer holds the resource until it has removed its configuration.
    cluster.find(KINDS.deployment.kind, nameOf(key))!.metadata.finalizers = ['didyma.io/proxy-configuration'];
    expect((await t.private.delete(`/api/deployment/${key}`, { token: owner.token })).status).to.equal(204);
    const first = await reconciler().runOnce();
    expect(first.removing).to.equal(1);
    expect(cluster.find(KINDS.deployment.kind, nameOf(key))?.metadata.deletionTimestamp).to.not.equal(undefined);
    expect(secretOf(key), 'the operator’s finalizer deletes the Secret, not the private server').to.not.equal(undefined);
    expect(await row(key)).to.include({ cluster_state: 'applied' });
    expect(await metric(metricNames.clusterResources, 'kind="deployment",state="removing"')).to.match(/ 1$/);
    // Still held: the next pass retries, and the row still says so.
    expect((await reconciler().runOnce()).removing).to.equal(1);
    cluster.finalize(KINDS.deployment.kind, nameOf(key));
    expect((await reconciler().runOnce()).removing).to.equal(0);
    expect(await row(key)).to.include({ cluster_state: 'removed' });
    expect(await metric(metricNames.clusterResources, 'kind="deployment",state="removing"')).to.match(/ 0$/);
  });

  it('retries a deletion the cluster refuses, counting each refusal', async () => {
    const key = await createDeployment();
    await reconciler().runOnce();
    expect((await t.private.delete(`/api/deployment/${key}`, { token: owner.token })).status).to.equal(204);
    cluster.refuse = 500;
    expect((await reconciler().runOnce()).removing).to.equal(1);
    expect(await metric(metricNames.clusterWriteFailures, 'kind="deployment",operation="delete"')).to.match(/ 1$/);
    expect(await row(key)).to.include({ cluster_state: 'applied' });
    cluster.refuse = undefined;
    await reconciler().runOnce();
    expect(await row(key)).to.include({ cluster_state: 'removed' });
    expect(cluster.find(KINDS.deployment.kind, nameOf(key))).to.equal(undefined);
  });

  it('lets a storage key be used again while the old resource is still being removed', async () => {
    const key = unique('files');
    const create = () => t.private.post('/api/storage', { token: owner.token, json: { storage_key: key, storage_class: FILESYSTEM_STORAGE, connector_init: { path: key } } });
    expect((await create()).status).to.equal(201);
    await reconciler().runOnce();
    const name = resourceName('storage', owner.ws.name, key);
    cluster.find(KINDS.storage.kind, name)!.metadata.finalizers = ['didyma.io/proxy-configuration'];
    expect((await t.private.delete(`/api/storage/${key}`, { token: owner.token })).status).to.equal(204);
    await reconciler().runOnce();
    expect((await create()).status).to.equal(201);
    await reconciler().runOnce();
    const rows = await own.db('storage_configs').where({ storage_key: key }).orderBy('id').select('cluster_state', 'cluster_reason');
    expect(rows).to.deep.equal([
      { cluster_state: 'removed', cluster_reason: null },
      { cluster_state: 'failed', cluster_reason: 'still_being_removed' },
    ]);
    cluster.finalize(KINDS.storage.kind, name);
    await reconciler().runOnce();
    expect(await own.db('storage_configs').where({ storage_key: key }).orderBy('id').pluck('cluster_state')).to.deep.equal(['removed', 'applied']);
  });

  it('gives the same result when two replicas run at once', async () => {
    const key = await createDeployment();
    const reports = await Promise.all([reconciler().runOnce(), reconciler().runOnce()]);
    expect(reports.map((r) => r.failed)).to.deep.equal([0, 0]);
    expect(await row(key)).to.include({ cluster_state: 'applied' });
  });

  it('is woken by the commit of a change, with no interval to wait for', async () => {
    const scheduler = new Scheduler(logger);
    const resync = reconciler(scheduler, (wake) => t.platform.changes().subscribeCommitted('desired_state', wake));
    resync.start();
    try {
      const key = await createDeployment();
      await until(async () => (await row(key))?.cluster_state === 'applied', 'the reconciler to apply the new deployment');
      expect((await t.private.delete(`/api/deployment/${key}`, { token: owner.token })).status).to.equal(204);
      await until(async () => (await row(key))?.cluster_state === 'removed', 'the reconciler to remove it');
    } finally {
      await resync.stop();
    }
  });

  it('passes again soon while a deletion is held or a write refused, with no change or interval to wake it', async () => {
    const key = await createDeployment();
    await reconciler().runOnce();
    cluster.find(KINDS.deployment.kind, nameOf(key))!.metadata.finalizers = ['didyma.io/proxy-configuration'];
    expect((await t.private.delete(`/api/deployment/${key}`, { token: owner.token })).status).to.equal(204);
    // No wake-ups: only its start, and the retries of what it left, run it.
    const resync = reconciler(new Scheduler(logger));
    resync.start();
    try {
      await until(async () => (await metric(metricNames.clusterResources, 'kind="deployment",state="removing"'))?.endsWith(' 1') === true, 'the deletion to be held');
      cluster.finalize(KINDS.deployment.kind, nameOf(key));
      await until(async () => (await row(key))?.cluster_state === 'removed', 'a retry to see the resource gone');
    } finally {
      await resync.stop();
    }
  });
});
