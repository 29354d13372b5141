import { expect } from 'chai';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Client as S3Client } from 'minio';
import { Client } from '../support/http.js';
import { demoDeployment, IRIS, modelPayload, upload } from '../support/fixtures.js';
import { requireEnv } from '../support/services.js';
import { waitFor } from '../support/kube.js';
import { freshTestNamespace, helm, importProjectImage, kubectl, kubectlJson, runningCluster, type Cluster } from '../support/cluster.js';

const CHART = 'charts/didyma';
const RELEASE = 'bundled';
const PASSWORD = 'Bundled-Pass-42';
const BUCKET = 'didyma';
const DEMO_PORT = 8090;

const eventually = <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> => waitFor(what, check, timeoutMs, 250);

type DependencyImages = { postgresql: string; rabbitmq: string; minio: string };

/** Builds the bundled dependencies' images from this machine's PostgreSQL, RabbitMQ and MinIO and imports them; their references. */
function importDependencyImages(cluster: Cluster): DependencyImages {
  const output = execFileSync(process.execPath, [path.resolve('scripts/image/dependency-images.mjs'), '--minio', requireEnv('TEST_MINIO_BINARY', 'minio'), '--import', cluster.containerd], { stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(output.toString()) as DependencyImages;
}

const imageValues = (prefix: string, reference: string): string[] => [
  `${prefix}.repository=${reference.slice(0, reference.lastIndexOf(':'))}`,
  `${prefix}.tag=${reference.slice(reference.lastIndexOf(':') + 1)}`,
  `${prefix}.pullPolicy=Never`,
];

/**
 * The chart with its own PostgreSQL, RabbitMQ and MinIO (postgresql.enabled,
 * rabbitmq.enabled, minio.enabled) on the real single-node cluster: none of
 * the host's services is used.
 */
describe('Cluster: helm install with the bundled PostgreSQL, RabbitMQ and MinIO', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-bundled-${suffix}`;
  let cluster: Cluster;

  before(async () => {
    cluster = runningCluster();
    await freshTestNamespace(cluster, namespace);
  });

  after(async () => {
    if (!cluster) return;
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
  });

  it('installs, migrates the bundled database, stores on the bundled MinIO, predicts through the bundled RabbitMQ, upgrades, uninstalls', async () => {
    const image = importProjectImage(cluster);
    const dependencies = importDependencyImages(cluster);
    // The demo model server as the README starts it, alongside the release.
    await kubectl(cluster, '-n', namespace, 'create', 'deployment', 'demo-model', `--image=${image}`, `--port=${DEMO_PORT}`, '--', 'node', 'bin/didyma.js', 'demo-model-server', '--port', String(DEMO_PORT));
    await kubectl(cluster, '-n', namespace, 'expose', 'deployment', 'demo-model');
    const values = [
      ...imageValues('image', image),
      ...imageValues('postgresql.image', dependencies.postgresql),
      ...imageValues('rabbitmq.image', dependencies.rabbitmq),
      ...imageValues('minio.image', dependencies.minio),
      'postgresql.enabled=true',
      'rabbitmq.enabled=true',
      'minio.enabled=true',
      // No storage provisioner on this node: the data lives as long as the pods.
      'postgresql.persistence.enabled=false',
      'rabbitmq.persistence.enabled=false',
      'minio.persistence.enabled=false',
      'egress.allowCidrs={10.88.0.0/16,10.96.0.0/16}',
      `secrets.adminPassword=${PASSWORD}`,
      'servers.auth.replicas=1',
      'servers.private.replicas=1',
      'servers.public.replicas=1',
      'executor.replicas=1',
      'operator.replicas=1',
    ].flatMap((value) => ['--set', value]);
    // --wait: the Deployments and StatefulSets Ready, then the post-install migration hook completed.
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...values, '--wait', '--timeout', '6m');

    const pods = (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE}`)).items as any[];
    const running = pods.filter((pod) => pod.status.phase === 'Running');
    expect(running.map((pod) => pod.metadata.labels['app.kubernetes.io/component']).sort()).to.deep.equal(['auth', 'executor', 'minio', 'operator', 'postgresql', 'private', 'public', 'rabbitmq']);
    for (const pod of running) expect(pod.status.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True'), `${pod.metadata.name} Ready`).to.equal(true);
    const postgresql = running.find((pod) => pod.metadata.labels['app.kubernetes.io/component'] === 'postgresql');
    expect(postgresql.spec.containers[0].image).to.equal(dependencies.postgresql);

    const service = async (name: string): Promise<string> => (await kubectlJson(cluster, '-n', namespace, 'get', 'service', `${RELEASE}-didyma-${name}`)).spec.clusterIP;
    const auth = new Client(`http://${await service('auth')}:8080`);
    const priv = new Client(`http://${await service('private')}:8081`);
    const pub = new Client(`http://${await service('public')}:8082`);
    // The migration hook's bootstrap made the first staff user in the bundled database.
    const login = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(login.status, login.text).to.equal(200);
    const token = login.body.access as string;

    // The generated MinIO credentials, and a bucket made with them, as NOTES.txt tells a user.
    const secret = await kubectlJson(cluster, '-n', namespace, 'get', 'secret', `${RELEASE}-didyma-minio`);
    const accessKey = Buffer.from(secret.data['root-user'], 'base64').toString();
    const secretKey = Buffer.from(secret.data['root-password'], 'base64').toString();
    const s3 = new S3Client({ endPoint: await service('minio'), port: 9000, useSSL: false, accessKey, secretKey });
    await s3.makeBucket(BUCKET);
    const storage = await priv.post('/api/storage', {
      token,
      json: {
        storage_key: 'bundled',
        storage_class: 'didyma.storage.S3Storage',
        connector_init: { endpoint: `http://${RELEASE}-didyma-minio:9000`, bucket_name: BUCKET, access_key: accessKey, secret_key: secretKey },
      },
    });
    expect(storage.status, storage.text).to.equal(201);
    // A file through the API lands in the bundled MinIO's bucket.
    const card = await upload(priv, token, 'bundled', '# Bundled', 'card.md');
    const objects: string[] = [];
    for await (const item of s3.listObjectsV2(BUCKET, '', true)) if (item.name) objects.push(item.name);
    expect(objects).to.have.length(1);

    // A prediction goes through the bundled RabbitMQ to the executor and back.
    const demoUrl = `http://demo-model:${DEMO_PORT}`;
    await demoDeployment(priv, token, demoUrl, 'demo');
    await eventually('the deployment configured', async () => /\sTrue\s/.test(await kubectl(cluster, '-n', namespace, 'get', 'mdep')));
    const registered = await priv.post('/api/platform_model', { token, json: modelPayload('iris-classifier', '1', card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    const model = '/api/model/iris-classifier/version/1';
    const session = (await pub.post(`${model}/session`, { token })).body.id;
    const invocation = await pub.post(`${model}/session/${session}/invocation`, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } });
    expect(invocation.status, invocation.text).to.equal(201);
    const status = await eventually('the prediction', async () => {
      const { body } = await pub.get(`${model}/session/${session}/invocation/${invocation.body.id}/check_progress`, { token });
      return ['COMPLETED', 'ERROR'].includes(body.status) && (body.status as string);
    });
    expect(status).to.equal('COMPLETED');

    // helm upgrade keeps the generated credentials: the same PostgreSQL pod runs on, the pre-upgrade migration reaches it.
    const secrets = async () => Promise.all(['postgresql', 'rabbitmq', 'minio'].map(async (name) => (await kubectlJson(cluster, '-n', namespace, 'get', 'secret', `${RELEASE}-didyma-${name}`)).data));
    const before = await secrets();
    await helm(cluster, 'upgrade', RELEASE, CHART, '-n', namespace, ...values, '--set', 'config.logLevel=debug', '--wait', '--timeout', '5m');
    expect(await secrets()).to.deep.equal(before);
    const [database] = (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=postgresql`)).items;
    expect(database.metadata.uid).to.equal(postgresql.metadata.uid);
    const again = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(again.status, again.text).to.equal(200);

    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait', '--timeout', '3m');
    const left = (await kubectlJson(cluster, '-n', namespace, 'get', 'statefulsets,services,secrets')).items.map((o: any) => `${o.kind}/${o.metadata.name}`);
    // Without persistence nothing of the bundled dependencies is kept; the chart's own Secret is (its encryption key).
    expect(left.filter((name: string) => /postgresql|rabbitmq|minio/.test(name))).to.deep.equal([]);
  });
});
