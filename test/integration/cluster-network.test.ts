import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { Client as S3Client } from 'minio';
import { completedPrediction, demoDeployment, modelPayload, upload } from '../support/fixtures.js';
import { waitFor } from '../support/kube.js';
import { freshTestNamespace, helm, imageValues, importDependencyImages, importProjectImage, kubectl, kubectlApply, kubectlJson, NODE_VALUES, runningCluster, serviceClient, testNamespace, type Cluster } from '../support/cluster.js';

const CHART = 'charts/didyma';
const RELEASE = 'netpol';
const PASSWORD = 'Netpol-Pass-42';
const BUCKET = 'didyma';
const DEMO_PORT = 8090;
const MODEL = '/api/model/iris-classifier/version/1';
const DEPENDENCIES = { postgresql: 5432, rabbitmq: 5672, minio: 9000 } as const;

const eventually = <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> => waitFor(what, check, timeoutMs, 500);

/** Connects from inside a pod: `open` once a TCP connection is made, `closed` when refused, dropped or timed out. */
const CONNECT = `const s = require('net').connect({ host: process.argv[1], port: Number(process.argv[2]), timeout: 3000 });
const done = (what) => { console.log(what); process.exit(0); };
s.on('connect', () => done('open')); s.on('timeout', () => done('closed')); s.on('error', () => done('closed'));`;

/** An address of this host outside the cluster's networks (what a pod may reach only if a policy lets it). */
function outsideAddress(): string {
  const address = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal && !a.address.startsWith('10.88.'));
  if (!address) throw new Error('this host has no IPv4 address outside the cluster bridge: the egress case needs one');
  return address.address;
}

/**
 * The chart's NetworkPolicies on the real cluster, enforced by its
 * NetworkPolicy implementation (scripts/services/cluster.sh): the chart
 * with its bundled PostgreSQL, RabbitMQ and MinIO and its default policies,
 * plus only what this node's DNS and API server addresses need. Pods that
 * are not the platform's are refused by the bundled services and by the
 * metrics ports; the platform's own pods run the walkthrough.
 */
describe('Cluster: NetworkPolicies of the chart', function () {
  this.timeout(600_000);
  const suffix = crypto.randomBytes(4).toString('hex');
  const namespace = `dy-netpol-${suffix}`;
  // The namespace the values name for Prometheus.
  const monitoring = `dy-netpol-mon-${suffix}`;
  // Model servers elsewhere in the cluster: one the values select, one they do not.
  const models = `dy-netpol-models-${suffix}`;
  let cluster: Cluster;
  let image: string;

  const service = async (name: string): Promise<string> => (await kubectlJson(cluster, '-n', namespace, 'get', 'service', `${RELEASE}-didyma-${name}`)).spec.clusterIP;
  const podIp = async (component: string): Promise<string> =>
    (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=${component}`)).items.find((pod: any) => pod.status.podIP && !pod.metadata.deletionTimestamp).status.podIP;

  /** A pod that only waits, with the given labels, for probes run in it. */
  const probePod = (ns: string, name: string, labels: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels },
    spec: {
      enableServiceLinks: false,
      securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'probe',
          image,
          imagePullPolicy: 'Never',
          command: ['node', '-e', 'setInterval(() => undefined, 1 << 30)'],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  });

  /** `open` or `closed`: a TCP connection from the pod to host:port. */
  const connect = async (ns: string, pod: string, host: string, port: number): Promise<string> =>
    (await kubectl(cluster, '-n', ns, 'exec', pod, '--', 'node', '-e', CONNECT, host, String(port))).trim();

  /** Waits until the connection has the expected outcome (a new pod's rules take a moment), then checks it holds. */
  const settles = async (what: string, ns: string, pod: string, host: string, port: number, expected: 'open' | 'closed') => {
    await eventually(`${what}: ${expected}`, async () => (await connect(ns, pod, host, port)) === expected, 60_000);
    expect(await connect(ns, pod, host, port), what).to.equal(expected);
  };

  before(async () => {
    cluster = runningCluster();
    await freshTestNamespace(cluster, namespace);
    // Made after: a second freshTestNamespace would delete the first as an earlier run's.
    await testNamespace(cluster, monitoring);
    await testNamespace(cluster, models);
  });

  after(async () => {
    if (!cluster) return;
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait').catch(() => undefined);
    for (const ns of [namespace, monitoring, models]) await kubectl(cluster, 'delete', 'namespace', ns, '--wait=false').catch(() => undefined);
  });

  it('installs with its policies on; the platform’s pods run the walkthrough on the bundled PostgreSQL, RabbitMQ and MinIO', async () => {
    image = importProjectImage(cluster);
    const dependencies = importDependencyImages(cluster);
    for (const name of ['demo-model', 'stray-model']) {
      await kubectl(cluster, '-n', models, 'create', 'deployment', name, `--image=${image}`, `--port=${DEMO_PORT}`, '--', 'node', 'bin/didyma.js', 'demo-model-server', '--port', String(DEMO_PORT));
      await kubectl(cluster, '-n', models, 'expose', 'deployment', name);
    }
    // This node's API server listens on its bridge address (NODE_VALUES name its DNS there too); the chart looks it up.
    const apiPort = Number(new URL(fs.readFileSync(cluster.kubeconfig, 'utf8').match(/server: (\S+)/)![1]!).port);
    const selected = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': models } }, podSelector: { matchLabels: { app: 'demo-model' } } };
    const values = [
      ...imageValues('image', image),
      ...Object.keys(DEPENDENCIES).flatMap((name) => [...imageValues(`${name}.image`, dependencies[name as keyof typeof DEPENDENCIES]), `${name}.enabled=true`, `${name}.persistence.enabled=false`]),
      `secrets.adminPassword=${PASSWORD}`,
      ...NODE_VALUES,
      `networkPolicy.ingress.metricsNamespaces={${monitoring}}`,
      // Not the Pod range: the Service range (what the URL policy sees of in-cluster model servers) and the node's bridge address.
      `egress.allowCidrs={10.96.0.0/16,${cluster.hostIp}/32}`,
    ].flatMap((value) => ['--set', value]);
    values.push('--set-json', `networkPolicy.egress.peers=${JSON.stringify([selected])}`);
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...values, '--wait', '--timeout', '6m');
    const policies = (await kubectlJson(cluster, '-n', namespace, 'get', 'networkpolicies')).items.map((o: any) => o.metadata.name).sort();
    expect(policies).to.deep.equal(['egress', 'ingress', 'kube-api', 'minio', 'postgresql', 'rabbitmq'].map((name) => `${RELEASE}-didyma-${name}`));
    // The API server as the install looked it up from the `kubernetes` Service's endpoints: its address and port only.
    const kubeApi = (await kubectlJson(cluster, '-n', namespace, 'get', 'networkpolicy', `${RELEASE}-didyma-kube-api`)).spec.egress;
    expect(kubeApi).to.deep.equal([{ to: [{ ipBlock: { cidr: `${cluster.hostIp}/32` } }], ports: [443, 6443, apiPort].map((port) => ({ port, protocol: 'TCP' })) }]);

    const auth = await serviceClient(cluster, namespace, `${RELEASE}-didyma-auth`, 8080);
    const priv = await serviceClient(cluster, namespace, `${RELEASE}-didyma-private`, 8081);
    const pub = await serviceClient(cluster, namespace, `${RELEASE}-didyma-public`, 8082);
    const login = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(login.status, login.text).to.equal(200);
    const token = login.body.access as string;
    const workspaces = await auth.get('/api/auth/workspace', { token });
    expect(workspaces.status, workspaces.text).to.equal(200);
    expect(workspaces.body.map((w: any) => w.name)).to.include('default');

    // The bucket is made from the node (not a pod); files then go through the servers to the bundled MinIO.
    const secret = await kubectlJson(cluster, '-n', namespace, 'get', 'secret', `${RELEASE}-didyma-minio`);
    const [accessKey, secretKey] = ['root-user', 'root-password'].map((key) => Buffer.from(secret.data[key], 'base64').toString());
    await new S3Client({ endPoint: await service('minio'), port: 9000, useSSL: false, accessKey: accessKey!, secretKey: secretKey! }).makeBucket(BUCKET);
    const storage = await priv.post('/api/storage', {
      token,
      json: { storage_key: 'cards', storage_class: 'didyma.storage.S3Storage', connector_init: { endpoint: `http://${RELEASE}-didyma-minio:9000`, bucket_name: BUCKET, access_key: accessKey, secret_key: secretKey } },
    });
    expect(storage.status, storage.text).to.equal(201);
    const card = await upload(priv, token, 'cards', '# Iris', 'card.md');

    // A prediction through the bundled RabbitMQ, an executor and the demo model server.
    await demoDeployment(priv, token, `http://demo-model.${models}:${DEMO_PORT}`, 'demo');
    await eventually('the deployment configured', async () => /\sTrue\s/.test(await kubectl(cluster, '-n', namespace, 'get', 'mdep')));
    const registered = await priv.post('/api/platform_model', { token, json: modelPayload('iris-classifier', '1', card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    const session = (await pub.post(`${MODEL}/session`, { token })).body.id;
    await completedPrediction(pub, token, MODEL, session);
  });

  it('refuses the bundled PostgreSQL, RabbitMQ and MinIO to pods that are not the platform’s, here or in another namespace', async () => {
    await kubectlApply(cluster, [
      probePod(namespace, 'outsider', { app: 'outsider' }),
      probePod(monitoring, 'scraper', { app: 'scraper' }),
      // The release's labels: what the policies let in.
      probePod(namespace, 'insider', { 'app.kubernetes.io/name': 'didyma', 'app.kubernetes.io/instance': RELEASE, 'app.kubernetes.io/component': 'probe' }),
    ]);
    for (const [ns, pod] of [[namespace, 'outsider'], [monitoring, 'scraper'], [namespace, 'insider']]) await kubectl(cluster, '-n', ns!, 'wait', '--for=condition=Ready', `pod/${pod}`, '--timeout=120s');
    for (const [name, port] of Object.entries(DEPENDENCIES)) {
      const ip = await podIp(name);
      await settles(`${name} from a pod with the release's labels`, namespace, 'insider', ip, port, 'open');
      await settles(`${name} from an unlabelled pod of the release's namespace`, namespace, 'outsider', ip, port, 'closed');
      await settles(`${name} from a pod of another namespace`, monitoring, 'scraper', ip, port, 'closed');
    }
    // The servers still take anyone's requests (their Ingress, in-cluster clients).
    await settles('the auth server from an unlabelled pod', namespace, 'outsider', await podIp('auth'), 8080, 'open');
  });

  it('serves every component’s /metrics only to the namespaces the values name, and the servers’ not on their API ports', async () => {
    for (const [component, apiPort] of [['auth', 8080], ['private', 8081], ['public', 8082]] as const) {
      const onApiPort = await kubectl(cluster, '-n', namespace, 'exec', 'outsider', '--', 'node', '-e', `fetch('http://${await podIp(component)}:${apiPort}/metrics').then((r) => console.log(r.status))`);
      expect(onApiPort.trim(), component).to.equal('404');
    }
    for (const [component, port] of [['auth', 9464], ['private', 9464], ['public', 9464], ['executor', 9464], ['operator', 9465]] as const) {
      const ip = await podIp(component);
      await settles(`${component} metrics from the release's namespace`, namespace, 'outsider', ip, port, 'closed');
      await settles(`${component} metrics from the monitoring namespace`, monitoring, 'scraper', ip, port, 'open');
      const scrape = await kubectl(cluster, '-n', monitoring, 'exec', 'scraper', '--', 'node', '-e', `fetch('http://${ip}:${port}/metrics').then(async (r) => console.log(r.status, (await r.text()).includes('# TYPE')))`);
      expect(scrape.trim(), component).to.equal('200 true');
    }
  });

  it('lets the executors call the configured networks and nothing outside them', async () => {
    const listener = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    try {
      const { port } = listener.address() as net.AddressInfo;
      const executor = (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=executor`)).items[0].metadata.name;
      // The same listener: through the bridge address (inside egress.allowCidrs) and through another of the host's.
      await settles('the executor to an address inside egress.allowCidrs', namespace, executor, cluster.hostIp, port, 'open');
      await settles('the executor to an address outside egress.allowCidrs', namespace, executor, outsideAddress(), port, 'closed');
      await settles('a pod without the policies to that address', namespace, 'outsider', outsideAddress(), port, 'open');
    } finally {
      listener.close();
    }
  });

  it('lets the executors reach the model servers the selectors name, and no other pod of the cluster', async () => {
    const executor = (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=executor`)).items[0].metadata.name;
    const modelPod = async (app: string) => (await kubectlJson(cluster, '-n', models, 'get', 'pods', '-l', `app=${app}`)).items.find((pod: any) => pod.status.podIP).status.podIP as string;
    await kubectl(cluster, '-n', models, 'rollout', 'status', 'deployment/stray-model', '--timeout=180s');
    await settles('the executor to the selected model server', namespace, executor, await modelPod('demo-model'), DEMO_PORT, 'open');
    // The other one listens (a pod without the policies reaches it), yet the executor is refused.
    await settles('a pod without the policies to the model server no selector names', namespace, 'outsider', await modelPod('stray-model'), DEMO_PORT, 'open');
    await settles('the executor to that model server', namespace, executor, await modelPod('stray-model'), DEMO_PORT, 'closed');
  });
});
