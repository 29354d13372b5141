import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../support/http.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { waitFor } from '../support/kube.js';
import { helm, createHostDatabase, dropHostDatabase, hostServices, imageValues, importProjectImage, installCrds, kubectl, kubectlApply, kubectlJson, kubernetesApiValues, NODE_VALUES, runningCluster, type Cluster } from '../support/cluster.js';

const CHART = 'charts/didyma';
const RELEASE = 'didyma';
const PASSWORD = 'Gitops-Pass-42';
const COMPONENTS = ['auth', 'private', 'public', 'executor', 'operator'];

/**
 * The chart as Argo CD deploys it: `helm template` without cluster access,
 * the keys in a Secret the team manages (secrets.existingSecret), the output
 * applied with kubectl, then rendered and applied again as every sync does.
 * Its own namespace, database and queue; it never deletes another suite's.
 */
describe('Cluster: GitOps, helm template | kubectl apply, twice', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-gitops-${suffix}`;
  const database = `didyma_gitops_${suffix}`;
  const queue = `didyma.gitops.${suffix}`;
  let cluster: Cluster;
  let image: string;
  let manifest: string;

  const keys = {
    'encryption.key': crypto.randomBytes(32).toString('base64'),
    'jwt-private.pem': crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    'admin-password': PASSWORD,
    'database-url': `postgres://didyma:didyma@postgresql:5432/${database}`,
    'amqp-url': 'amqp://didyma:didyma@rabbitmq:5672',
  };

  /** What a GitOps tool runs: helm template, no cluster access, into a file kubectl reads. */
  const renderToFile = async (): Promise<string> => {
    const values = [...imageValues('image', image), 'secrets.existingSecret=didyma-keys', 'externalPrometheus.url=http://prometheus:9090', `config.extraEnv.DIDYMA_QUEUE_NAME=${queue}`, ...NODE_VALUES, ...(await kubernetesApiValues(cluster))];
    const rendered = await helm(cluster, 'template', RELEASE, CHART, '-n', namespace, ...values.flatMap((value) => ['--set', value]));
    const file = path.join(os.tmpdir(), `didyma-gitops-${suffix}-${crypto.randomBytes(4).toString('hex')}.yaml`);
    fs.writeFileSync(file, rendered);
    return file;
  };

  const pods = async (): Promise<any[]> =>
    (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE}`)).items.filter(
      (pod: any) => !pod.metadata.deletionTimestamp && COMPONENTS.includes(pod.metadata.labels['app.kubernetes.io/component']),
    );
  const ready = (pod: any): boolean => pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ?? false;
  const auth = async (): Promise<Client> => new Client(`http://${(await kubectlJson(cluster, '-n', namespace, 'get', 'service', `${RELEASE}-auth`)).spec.clusterIP}:8080`);
  const generations = async (): Promise<Record<string, number>> =>
    Object.fromEntries((await kubectlJson(cluster, '-n', namespace, 'get', 'deployments,jobs,poddisruptionbudgets')).items.map((o: any) => [`${o.kind}/${o.metadata.name}`, o.metadata.generation]));
  const keysSecret = async () => kubectlJson(cluster, '-n', namespace, 'get', 'secret', 'didyma-keys');

  before(async () => {
    cluster = runningCluster();
    image = importProjectImage(cluster);
    await createHostDatabase(database);
    await kubectl(cluster, 'create', 'namespace', namespace);
    await installCrds(cluster);
    await kubectlApply(cluster, [
      ...hostServices(cluster, namespace, ['postgresql', 'rabbitmq']),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'didyma-keys', namespace }, stringData: keys },
    ]);
  });

  after(async () => {
    if (!cluster) return;
    if (manifest) await kubectl(cluster, 'delete', '-f', manifest, '--wait=false', '--ignore-not-found').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
    if (manifest) fs.rmSync(manifest, { force: true });
    await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queue);
    await dropHostDatabase(database).catch(() => undefined);
  });

  it('installs with kubectl apply: the migration Job runs, every component becomes Ready, the admin logs in with the Secret\'s password', async () => {
    manifest = await renderToFile();
    const applied = await kubectl(cluster, 'apply', '-f', manifest);
    expect(applied).to.not.match(/secret\/didyma-keys/);
    await waitFor('the migration Job to complete', async () => (await kubectlJson(cluster, '-n', namespace, 'get', 'job', `${RELEASE}-migrate`)).status?.succeeded === 1, 300_000, 1000);
    await waitFor('every component Ready', async () => {
      const current = await pods();
      return current.length === COMPONENTS.length && current.every(ready);
    }, 300_000, 1000);
    const login = await (await auth()).post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(login.status, login.text).to.equal(200);
  });

  it('renders and applies again as a sync does: nothing changes, no pod restarts, the keys stay', async () => {
    const before = { pods: (await pods()).map((pod) => `${pod.metadata.name}/${pod.status.containerStatuses?.[0]?.restartCount}`).sort(), secret: (await keysSecret()).metadata.resourceVersion, generations: await generations() };
    const jwks = (await (await auth()).get('/api/auth/jwks.json')).body;
    const again = await renderToFile();
    try {
      expect(fs.readFileSync(again, 'utf8'), 'the second render').to.equal(fs.readFileSync(manifest, 'utf8'));
      // kubectl diff exits 0 only when the cluster already matches.
      await kubectl(cluster, 'diff', '-f', again);
      const lines = (await kubectl(cluster, 'apply', '-f', again)).trim().split('\n');
      // kubectl calls every PodDisruptionBudget "configured" (its selector's patch strategy is replace, so the patch is never empty); their generations below show nothing changed.
      expect(lines.filter((line) => !line.endsWith(' unchanged') && !line.startsWith('poddisruptionbudget.policy/')), 'objects kubectl apply changed').to.deep.equal([]);
    } finally {
      fs.rmSync(again, { force: true });
    }
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect((await pods()).map((pod) => `${pod.metadata.name}/${pod.status.containerStatuses?.[0]?.restartCount}`).sort(), 'pods and restarts').to.deep.equal(before.pods);
    expect((await keysSecret()).metadata.resourceVersion, 'the keys Secret').to.equal(before.secret);
    expect(await generations(), 'the specs of Deployments, Jobs and PodDisruptionBudgets').to.deep.equal(before.generations);
    expect((await (await auth()).get('/api/auth/jwks.json')).body, 'the signing key').to.deep.equal(jwks);
    const login = await (await auth()).post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(login.status, login.text).to.equal(200);
  });
});
