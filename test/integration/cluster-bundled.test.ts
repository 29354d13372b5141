import { expect } from 'chai';
import crypto from 'node:crypto';
import { Client as S3Client } from 'minio';
import { Client } from '../support/http.js';
import { completedPrediction, demoDeployment, modelPayload, upload } from '../support/fixtures.js';
import { credentialsNamespaceOf, waitFor } from '../support/kube.js';
import { freshTestNamespace, helm, imageValues, importDependencyImages, importProjectImage, kubectl, kubectlJson, LOCAL_STORAGE_CLASS, localVolumes, NODE_VALUES, removeLocalVolumes, runningCluster, serviceClient, type Cluster } from '../support/cluster.js';

const CHART = 'charts/didyma';
const RELEASE = 'bundled';
const PASSWORD = 'Bundled-Pass-42';
const BUCKET = 'didyma';
const DEMO_PORT = 8090;

const eventually = <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> => waitFor(what, check, timeoutMs, 250);

/**
 * The chart with its own PostgreSQL, RabbitMQ and MinIO (postgresql.enabled,
 * rabbitmq.enabled, minio.enabled) on the real single-node cluster: none of
 * the host's services is used. Their data is on PersistentVolumeClaims, as by
 * default, bound to local volumes of the node.
 */
describe('Cluster: helm install with the bundled PostgreSQL, RabbitMQ and MinIO', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-bundled-${suffix}`;
  const DEPENDENCIES = ['postgresql', 'rabbitmq', 'minio'];
  // The StatefulSets' claims (volumeClaimTemplates "data", one replica each).
  const CLAIMS = DEPENDENCIES.map((name) => `data-${RELEASE}-didyma-${name}-0`);
  const MODEL = '/api/model/iris-classifier/version/1';
  let cluster: Cluster;
  let values: string[];
  let session: string;
  let firstInvocation: string;

  const service = async (name: string): Promise<string> => (await kubectlJson(cluster, '-n', namespace, 'get', 'service', `${RELEASE}-didyma-${name}`)).spec.clusterIP;
  const client = (name: string, port: number) => serviceClient(cluster, namespace, `${RELEASE}-didyma-${name}`, port);
  const clients = async () => ({ auth: await client('auth', 8080), priv: await client('private', 8081), pub: await client('public', 8082) });
  const login = async (auth: Client): Promise<string> => {
    const reply = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(reply.status, reply.text).to.equal(200);
    return reply.body.access as string;
  };
  /** Queues a prediction through the bundled RabbitMQ and waits for it; its id. */
  const predict = (pub: Client, token: string) => completedPrediction(pub, token, MODEL, session);
  const kept = async (): Promise<string[]> =>
    (await kubectlJson(cluster, '-n', namespace, 'get', 'statefulsets,services,secrets,persistentvolumeclaims')).items
      .map((o: any) => `${o.kind}/${o.metadata.name}`)
      .filter((name: string) => /postgresql|rabbitmq|minio/.test(name))
      .sort();

  before(async () => {
    cluster = runningCluster();
    await freshTestNamespace(cluster, namespace);
    await localVolumes(cluster, namespace, CLAIMS);
  });

  after(async () => {
    if (!cluster) return;
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, credentialsNamespaceOf(namespace), '--wait=false', '--ignore-not-found').catch(() => undefined);
    await removeLocalVolumes(cluster, namespace, CLAIMS).catch(() => undefined);
  });

  it('installs, migrates the bundled database, stores on the bundled MinIO, predicts through the bundled RabbitMQ, upgrades, uninstalls keeping the data', async () => {
    const image = importProjectImage(cluster);
    const dependencies = importDependencyImages(cluster);
    // The demo model server as the README starts it, alongside the release.
    await kubectl(cluster, '-n', namespace, 'create', 'deployment', 'demo-model', `--image=${image}`, `--port=${DEMO_PORT}`, '--', 'node', 'bin/didyma.js', 'demo-model-server', '--port', String(DEMO_PORT));
    await kubectl(cluster, '-n', namespace, 'expose', 'deployment', 'demo-model');
    values = [
      ...imageValues('image', image),
      ...imageValues('postgresql.image', dependencies.postgresql),
      ...imageValues('rabbitmq.image', dependencies.rabbitmq),
      ...imageValues('minio.image', dependencies.minio),
      ...DEPENDENCIES.flatMap((name) => [`${name}.enabled=true`, `${name}.persistence.storageClass=${LOCAL_STORAGE_CLASS}`]),
      `secrets.adminPassword=${PASSWORD}`,
      ...NODE_VALUES,
    ].flatMap((value) => ['--set', value]);
    // --wait: the Deployments and StatefulSets Ready, then the post-install migration hook completed.
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...values, '--wait', '--timeout', '6m');

    const pods = (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE}`)).items as any[];
    const running = pods.filter((pod) => pod.status.phase === 'Running');
    expect(running.map((pod) => pod.metadata.labels['app.kubernetes.io/component']).sort()).to.deep.equal(['auth', 'executor', 'minio', 'operator', 'postgresql', 'private', 'public', 'rabbitmq']);
    for (const pod of running) expect(pod.status.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True'), `${pod.metadata.name} Ready`).to.equal(true);
    const postgresql = running.find((pod) => pod.metadata.labels['app.kubernetes.io/component'] === 'postgresql');
    expect(postgresql.spec.containers[0].image).to.equal(dependencies.postgresql);
    const claims = (await kubectlJson(cluster, '-n', namespace, 'get', 'persistentvolumeclaims')).items as any[];
    expect(claims.map((claim) => [claim.metadata.name, claim.status.phase]).sort()).to.deep.equal(CLAIMS.map((name) => [name, 'Bound']).sort());

    const { auth, priv, pub } = await clients();
    // The migration hook's bootstrap made the first staff user in the bundled database.
    const token = await login(auth);

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
    session = (await pub.post(`${MODEL}/session`, { token })).body.id;
    firstInvocation = await predict(pub, token);

    // helm upgrade keeps the generated credentials: the same PostgreSQL pod runs on, the pre-upgrade migration reaches it.
    const secrets = async () => Promise.all(DEPENDENCIES.map(async (name) => (await kubectlJson(cluster, '-n', namespace, 'get', 'secret', `${RELEASE}-didyma-${name}`)).data));
    const before = await secrets();
    await helm(cluster, 'upgrade', RELEASE, CHART, '-n', namespace, ...values, '--set', 'config.logLevel=debug', '--wait', '--timeout', '5m');
    expect(await secrets()).to.deep.equal(before);
    const [database] = (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=postgresql`)).items;
    expect(database.metadata.uid).to.equal(postgresql.metadata.uid);
    // A kept-alive connection may still lead to an auth pod the upgrade replaced: a client logs in again on a new one.
    await eventually('a login once the upgrade has replaced the auth pod', () => login(auth));

    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait', '--timeout', '3m');
    // The volumes outlive the release, and so do the credentials they were initialised with.
    expect(await kept()).to.deep.equal([...CLAIMS.map((name) => `PersistentVolumeClaim/${name}`), ...DEPENDENCIES.map((name) => `Secret/${RELEASE}-didyma-${name}`)].sort());
  });

  it('installs again on the kept volumes: the same users, models, invocations, files and stored secrets', async () => {
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...values, '--wait', '--timeout', '6m');
    const { auth, priv, pub } = await clients();
    const token = await login(auth);
    const earlier = await pub.get(`${MODEL}/session/${session}/invocation/${firstInvocation}/check_progress`, { token });
    expect(earlier.status, earlier.text).to.equal(200);
    expect(earlier.body.status).to.equal('COMPLETED');
    // The storage configuration's secret key decrypts (the platform's key was kept too) and the bucket is still there.
    await upload(priv, token, 'bundled', '# Bundled again', 'card-2.md');
    await predict(pub, token);
  });
});
