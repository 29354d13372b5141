import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../support/http.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { waitFor } from '../support/kube.js';
import {
  appliedMigrations,
  createHostDatabase,
  dropHostDatabase,
  helm,
  hostDatabaseSecret,
  hostServices,
  hostServiceValues,
  imageValues,
  importProjectImage,
  kubectl,
  kubectlApply,
  kubectlJson,
  kubernetesApiValues,
  NODE_VALUES,
  removeRetaggedImage,
  retagImage,
  runningCluster,
  serviceClient,
  testNamespace,
  type Cluster,
} from '../support/cluster.js';

const CHART = 'charts/didyma';
const RELEASE = 'didyma';
const PASSWORD = 'Gitops-Pass-42';
const COMPONENTS = ['auth', 'private', 'public', 'executor', 'operator'];
/** The field manager of the applies, as a GitOps tool's own. */
const FIELD_MANAGER = 'gitops-sync';

/** A release's view for the checks both suites make: its pods, Jobs and first staff user's login. */
function releaseView(cluster: Cluster, namespace: string) {
  const componentPods = async (): Promise<any[]> =>
    (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE}`)).items.filter(
      (pod: any) => !pod.metadata.deletionTimestamp && COMPONENTS.includes(pod.metadata.labels['app.kubernetes.io/component']),
    );
  const ready = (pod: any): boolean => pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ?? false;
  const auth = (): Promise<Client> => serviceClient(cluster, namespace, `${RELEASE}-auth`, 8080);
  return {
    componentPods,
    ready,
    auth,
    /** Waits until each component runs one Ready pod of `image` and no other pod of it is left. */
    async rolledTo(image: string): Promise<void> {
      await waitFor(`every component on ${image} and Ready`, async () => {
        const pods = await componentPods();
        return pods.length === COMPONENTS.length && pods.every((pod) => ready(pod) && pod.spec.containers.every((c: any) => c.image === image));
      }, 420_000, 1000);
    },
    /** What is failing in the namespace: Jobs not complete, pods neither Succeeded nor Ready, containers restarted. */
    async failing(): Promise<string[]> {
      const jobs = (await kubectlJson(cluster, '-n', namespace, 'get', 'jobs')).items
        .filter((job: any) => !job.status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True') || job.status?.failed)
        .map((job: any) => `Job/${job.metadata.name} ${JSON.stringify(job.status)}`);
      const pods = (await kubectlJson(cluster, '-n', namespace, 'get', 'pods')).items
        .filter((pod: any) => !pod.metadata.deletionTimestamp)
        .filter((pod: any) => !(pod.status.phase === 'Succeeded' || (pod.status.phase === 'Running' && ready(pod))) || pod.status.containerStatuses?.some((c: any) => c.restartCount > 0))
        .map((pod: any) => `Pod/${pod.metadata.name} ${pod.status.phase} ${JSON.stringify(pod.status.containerStatuses?.map((c: any) => [c.restartCount, c.state]))}`);
      return [...jobs, ...pods];
    },
    async adminLogsIn(): Promise<void> {
      const login = await (await auth()).post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
      expect(login.status, login.text).to.equal(200);
    },
  };
}

/** A suite's image, database and namespace, with the host's PostgreSQL and RabbitMQ and `objects` in it; the release's view. */
async function prepareRelease(cluster: Cluster, namespace: string, database: string, objects: object[]) {
  const image = importProjectImage(cluster);
  await createHostDatabase(database);
  await testNamespace(cluster, namespace);
  await kubectlApply(cluster, [...hostServices(cluster, namespace, ['postgresql', 'rabbitmq']), ...objects]);
  return { image, view: releaseView(cluster, namespace) };
}

/**
 * The chart as Argo CD deploys it: `helm template` with gitops.enabled and
 * without cluster access, the keys in a Secret the team manages
 * (secrets.existingSecret), the output applied server-side as a GitOps tool
 * does: all but the platform's components, the revision's migration Job
 * among them, first, then everything (what Argo CD's waves do). Then rendered and applied again as every sync does,
 * then with a new image. Its own namespace, database and queue; it never
 * deletes another suite's.
 */
describe('Cluster: GitOps, helm template | kubectl apply --server-side: install, an unchanged sync, an image bump', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-gitops-${suffix}`;
  const database = `didyma_gitops_${suffix}`;
  const queue = `didyma.gitops.${suffix}`;
  let cluster: Cluster;
  let image: string;
  let bumped: string | undefined;
  let manifest: string;
  let view: ReturnType<typeof releaseView>;
  let migrations: number;

  const keys = {
    'encryption.key': crypto.randomBytes(32).toString('base64'),
    'jwt-private.pem': crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    'admin-password': PASSWORD,
    'database-url': `postgres://didyma:didyma@postgresql:5432/${database}`,
    'amqp-url': 'amqp://didyma:didyma@rabbitmq:5672',
  };

  /** What a GitOps tool runs: helm template, no cluster access, into a file kubectl reads. */
  const renderToFile = async (reference: string): Promise<string> => {
    const values = [...imageValues('image', reference), 'gitops.enabled=true', 'secrets.existingSecret=didyma-keys', 'externalPrometheus.url=http://prometheus:9090', `config.extraEnv.DIDYMA_QUEUE_NAME=${queue}`, ...NODE_VALUES, ...(await kubernetesApiValues(cluster))];
    const rendered = await helm(cluster, 'template', RELEASE, CHART, '-n', namespace, ...values.flatMap((value) => ['--set', value]));
    const file = path.join(os.tmpdir(), `didyma-gitops-${suffix}-${crypto.randomBytes(4).toString('hex')}.yaml`);
    fs.writeFileSync(file, rendered);
    return file;
  };

  /**
   * A sync as docs/kubernetes.md gives it for kubectl: everything but the platform's components (the revision's
   * migration Job among it), the Job waited for, `whenMigrated` checked, then everything. The Job's name.
   */
  const sync = async (file: string, whenMigrated: () => Promise<void> = async () => undefined): Promise<string> => {
    const apply = (...args: string[]) => kubectl(cluster, 'apply', '--server-side', `--field-manager=${FIELD_MANAGER}`, '-f', file, ...args);
    const first = (await apply('-l', `app.kubernetes.io/component notin (${COMPONENTS.join(',')})`, '-o', 'name')).trim().split('\n');
    expect(first.filter((name) => name.startsWith('deployment.')), 'Deployments of the first step').to.deep.equal([]);
    const jobs = first.filter((name) => name.startsWith('job.batch/'));
    expect(jobs).to.have.length(1);
    const job = jobs[0]!;
    expect(job).to.match(/^job\.batch\/didyma-migrate-[0-9a-f]{8}$/);
    await kubectl(cluster, '-n', namespace, 'wait', '--for=condition=complete', '--timeout=300s', job).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await kubectl(cluster, '-n', namespace, 'logs', job, '--all-containers', '--tail=30').catch((e: Error) => e.message)}`);
    });
    await whenMigrated();
    await apply();
    return job.slice('job.batch/'.length);
  };

  const restarts = async () => (await view.componentPods()).map((pod) => `${pod.metadata.name}/${pod.status.containerStatuses?.[0]?.restartCount}`).sort();
  const generations = async (): Promise<Record<string, number>> =>
    Object.fromEntries((await kubectlJson(cluster, '-n', namespace, 'get', 'deployments,jobs,poddisruptionbudgets')).items.map((o: any) => [`${o.kind}/${o.metadata.name}`, o.metadata.generation]));
  const keysSecret = async () => kubectlJson(cluster, '-n', namespace, 'get', 'secret', 'didyma-keys');

  before(async () => {
    cluster = runningCluster();
    ({ image, view } = await prepareRelease(cluster, namespace, database, [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'didyma-keys', namespace }, stringData: keys }]));
  });

  after(async () => {
    if (!cluster) return;
    if (manifest) await kubectl(cluster, 'delete', '-f', manifest, '--wait=false', '--ignore-not-found').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
    if (manifest) fs.rmSync(manifest, { force: true });
    if (bumped) removeRetaggedImage(cluster, bumped);
    await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queue);
    await dropHostDatabase(database).catch(() => undefined);
  });

  it('installs with kubectl apply --server-side: the migration Job runs first, every component becomes Ready, the admin logs in with the Secret\'s password', async () => {
    manifest = await renderToFile(image);
    const rendered = fs.readFileSync(manifest, 'utf8');
    expect(rendered, 'Helm hooks, the test pod, the uninstall cleanup').to.not.match(/helm\.sh\/hook|didyma-test|release-finalizers/);
    const job = await sync(manifest, async () => {
      expect((await kubectlJson(cluster, '-n', namespace, 'get', 'deployments')).items, 'Deployments before the migration finished').to.deep.equal([]);
    });
    expect((await kubectlJson(cluster, '-n', namespace, 'get', 'job', job)).status.succeeded).to.equal(1);
    await view.rolledTo(image);
    await view.adminLogsIn();
    migrations = await appliedMigrations(database);
    expect(migrations).to.be.greaterThan(0);
    expect(await view.failing(), 'failing').to.deep.equal([]);
  });

  it('renders and applies again as a sync does: nothing changes, no pod restarts, the keys stay', async () => {
    const before = { pods: await restarts(), secret: (await keysSecret()).metadata.resourceVersion, generations: await generations() };
    const jwks = (await (await view.auth()).get('/api/auth/jwks.json')).body;
    const again = await renderToFile(image);
    try {
      expect(fs.readFileSync(again, 'utf8'), 'the second render').to.equal(fs.readFileSync(manifest, 'utf8'));
      // kubectl diff exits 0 only when the cluster already matches.
      await kubectl(cluster, 'diff', '--server-side', `--field-manager=${FIELD_MANAGER}`, '-f', again);
      await sync(again);
    } finally {
      fs.rmSync(again, { force: true });
    }
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(await restarts(), 'pods and restarts').to.deep.equal(before.pods);
    expect((await keysSecret()).metadata.resourceVersion, 'the keys Secret').to.equal(before.secret);
    expect(await generations(), 'the specs of Deployments, Jobs and PodDisruptionBudgets').to.deep.equal(before.generations);
    expect((await (await view.auth()).get('/api/auth/jwks.json')).body, 'the signing key').to.deep.equal(jwks);
    await view.adminLogsIn();
  });

  it('bumps the image: a new migration Job runs once and finds nothing to do, every pod rolls to the new image, nothing is left failing', async () => {
    const before = (await view.componentPods()).map((pod) => pod.metadata.name);
    const [previousJob] = (await kubectlJson(cluster, '-n', namespace, 'get', 'jobs', '-l', 'app.kubernetes.io/component=migrate')).items.map((job: any) => job.metadata.name);
    bumped = retagImage(cluster, image, `bump-${suffix}`);
    const next = await renderToFile(bumped);
    fs.rmSync(manifest, { force: true });
    manifest = next;
    const images = async () => (await kubectlJson(cluster, '-n', namespace, 'get', 'deployments')).items.map((d: any) => d.spec.template.spec.containers[0].image);
    const job = await sync(manifest, async () => {
      expect(await images(), 'the Deployments\' image once the migration finished').to.deep.equal(COMPONENTS.map(() => image));
    });
    expect(job, 'the new revision\'s Job').to.not.equal(previousJob);
    const status = (await kubectlJson(cluster, '-n', namespace, 'get', 'job', job)).status;
    expect([status.succeeded, status.failed ?? 0], 'the new Job: succeeded, failed').to.deep.equal([1, 0]);
    expect(await kubectl(cluster, '-n', namespace, 'logs', `job/${job}`, '-c', 'migrate')).to.include('migrations applied: none (up to date)');
    await view.rolledTo(bumped);
    expect((await view.componentPods()).map((pod) => pod.metadata.name).filter((name) => before.includes(name)), 'pods of the old image').to.deep.equal([]);
    expect(await appliedMigrations(database), 'migrations recorded').to.equal(migrations);
    // The previous revision's Job stays complete until its TTL; nothing else is left over or failing.
    expect((await kubectlJson(cluster, '-n', namespace, 'get', 'jobs', '-l', 'app.kubernetes.io/component=migrate')).items.map((o: any) => o.metadata.name).sort()).to.deep.equal([job, previousJob].sort());
    expect(await view.failing(), 'failing').to.deep.equal([]);
    const deployments = (await kubectlJson(cluster, '-n', namespace, 'get', 'deployments')).items.map((d: any) => `${d.metadata.name} ${d.status.updatedReplicas}/${d.status.replicas} ${d.status.unavailableReplicas ?? 0}`);
    expect(deployments).to.deep.equal(COMPONENTS.map((component) => `${RELEASE}-${component} 1/1 0`).sort());
    await view.adminLogsIn();
  });
});

/**
 * The same image bump through Helm: a release installed with helm install,
 * then helm upgrade to the new image, its migration a pre-upgrade hook.
 */
describe('Cluster: an image bump through helm upgrade', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-helm-bump-${suffix}`;
  const database = `didyma_helm_bump_${suffix}`;
  const queue = `didyma.helm-bump.${suffix}`;
  let cluster: Cluster;
  let image: string;
  let bumped: string | undefined;
  let view: ReturnType<typeof releaseView>;

  const valueArgs = (reference: string): string[] => [...imageValues('image', reference), ...hostServiceValues(queue, PASSWORD), ...NODE_VALUES].flatMap((value) => ['--set', value]);
  const migrateHook = async () => JSON.parse(await helm(cluster, '-n', namespace, 'status', RELEASE, '-o', 'json')).hooks.find((hook: any) => hook.kind === 'Job' && hook.name === `${RELEASE}-migrate`);

  before(async () => {
    cluster = runningCluster();
    ({ image, view } = await prepareRelease(cluster, namespace, database, [hostDatabaseSecret(namespace, database)]));
  });

  after(async () => {
    if (!cluster) return;
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, `${namespace}-credentials`, '--wait=false', '--ignore-not-found').catch(() => undefined);
    if (bumped) removeRetaggedImage(cluster, bumped);
    await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queue);
    await dropHostDatabase(database).catch(() => undefined);
  });

  it('helm upgrade to a new image runs the migration hook again, which finds nothing to do, and rolls every pod; nothing is left failing', async () => {
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...valueArgs(image), '--wait', '--timeout', '5m');
    await view.rolledTo(image);
    const migrations = await appliedMigrations(database);
    const installed = await migrateHook();
    expect(installed.last_run.phase).to.equal('Succeeded');
    const before = (await view.componentPods()).map((pod) => pod.metadata.name);

    bumped = retagImage(cluster, image, `helm-bump-${suffix}`);
    await helm(cluster, 'upgrade', RELEASE, CHART, '-n', namespace, ...valueArgs(bumped), '--wait', '--timeout', '5m');
    const upgraded = await migrateHook();
    expect(upgraded.last_run.phase, 'the pre-upgrade migration').to.equal('Succeeded');
    expect(Date.parse(upgraded.last_run.started_at)).to.be.greaterThan(Date.parse(installed.last_run.completed_at));
    await view.rolledTo(bumped);
    expect((await view.componentPods()).map((pod) => pod.metadata.name).filter((name) => before.includes(name)), 'pods of the old image').to.deep.equal([]);
    expect(await appliedMigrations(database), 'migrations recorded').to.equal(migrations);
    expect(await view.failing(), 'failing').to.deep.equal([]);
    await view.adminLogsIn();
  });
});
