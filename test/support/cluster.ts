import { execFile, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { credentialsNamespaceOf, waitFor } from './kube.js';
import { Client } from './http.js';
import { requireEnv } from './services.js';

// The end-to-end tests' view of the real cluster of scripts/services/cluster.sh:
// kubectl and helm on its kubeconfig, the project's image imported into its
// containerd, and the host's test services as Services without selectors.

const run = promisify(execFile);

export interface Cluster {
  kubeconfig: string;
  containerd: string;
  /** The node's address on the pods' bridge, where the host's services are relayed. */
  hostIp: string;
  kubectl: string;
  helm: string;
}

/**
 * The running cluster, or a failure that says why it is not there (make test
 * starts it; a suite that cannot reach it fails, it never skips).
 */
export function runningCluster(): Cluster {
  const cluster = {
    kubeconfig: requireEnv('TEST_CLUSTER_KUBECONFIG', 'cluster'),
    containerd: requireEnv('TEST_CLUSTER_CONTAINERD', 'cluster'),
    hostIp: requireEnv('TEST_CLUSTER_HOST_IP', 'cluster'),
    kubectl: requireEnv('TEST_KUBECTL', 'cluster'),
    helm: requireEnv('TEST_HELM', 'cluster'),
  };
  try {
    execFileSync('bash', [path.resolve('scripts/services/cluster.sh'), 'status'], { stdio: 'pipe', timeout: 30_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`the test cluster is not running (start it with \`bash scripts/services/cluster.sh start\`, logs in its state directory): ${stdout}${stderr}`);
  }
  return cluster;
}

async function tool(binary: string, args: string[], env: Record<string, string>): Promise<string> {
  try {
    return (await run(binary, args, { env: { ...process.env, ...env }, maxBuffer: 32 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${path.basename(binary)} ${args.join(' ')} failed:\n${stderr}\n${stdout}`);
  }
}

export const kubectl = (cluster: Cluster, ...args: string[]) => tool(cluster.kubectl, ['--kubeconfig', cluster.kubeconfig, ...args], {});
export const helm = (cluster: Cluster, ...args: string[]) => tool(cluster.helm, ['--kubeconfig', cluster.kubeconfig, ...args], {});

export async function kubectlJson<T = any>(cluster: Cluster, ...args: string[]): Promise<T> {
  return JSON.parse(await kubectl(cluster, ...args, '-o', 'json')) as T;
}

const TEST_NAMESPACE_LABEL = 'didyma.test/suite';

/** The label value of this run's namespaces and volumes: its process id, so that runs side by side leave each other's alone. */
const RUN_OWNER = String(process.pid);

/** Whether a labelled object belongs to a run that is gone (or to one from before runs were told apart). */
function ownerGone(item: any): boolean {
  const owner = Number(item.metadata.labels?.[TEST_NAMESPACE_LABEL]);
  if (!Number.isInteger(owner) || owner <= 0) return true;
  if (owner === process.pid) return false;
  try {
    process.kill(owner, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Creates a suite's namespace after deleting those an interrupted run left
 * behind, so their pods do not load the node; a run still going keeps its own.
 */
export async function freshTestNamespace(cluster: Cluster, namespace: string): Promise<void> {
  for (const volume of (await kubectlJson(cluster, 'get', 'persistentvolumes', '-l', TEST_NAMESPACE_LABEL)).items.filter(ownerGone)) {
    await kubectl(cluster, 'delete', 'persistentvolume', volume.metadata.name, '--wait=false', '--ignore-not-found');
  }
  const stale = (await kubectlJson(cluster, 'get', 'namespaces', '-l', TEST_NAMESPACE_LABEL)).items.filter(ownerGone).map((item: any) => item.metadata.name as string);
  for (const name of stale) {
    fs.rmSync(path.join(volumesDir(cluster), name), { recursive: true, force: true });
    // The chart's credentials namespace too: helm uninstall keeps it.
    await kubectl(cluster, 'delete', 'namespace', name, credentialsNamespaceOf(name), '--wait=false', '--ignore-not-found');
    await releaseFinalizers(cluster, name);
  }
  await testNamespace(cluster, namespace);
}

/**
 * Waits until no suite's namespace is still being deleted: while one tears
 * down, the node's NetworkPolicy firewall rewrites its rules and a new pod's
 * connections may stall for seconds, which a suite would take for its own fault.
 */
async function settledNamespaces(cluster: Cluster): Promise<void> {
  await waitFor(
    "earlier suites' namespaces to be deleted",
    async () => {
      const terminating = (await kubectlJson(cluster, 'get', 'namespaces', '-l', TEST_NAMESPACE_LABEL)).items.filter((item: any) => item.status?.phase === 'Terminating');
      for (const item of terminating) await releaseFinalizers(cluster, item.metadata.name);
      return terminating.length === 0;
    },
    300_000,
    1000,
  );
}

/** Drops the finalizers of a deleted suite namespace's custom resources: its operator is gone with it, and nobody else would ever release them. */
async function releaseFinalizers(cluster: Cluster, namespace: string): Promise<void> {
  for (const object of (await kubectl(cluster, '-n', namespace, 'get', 'mdep,stcfg', '-o', 'name').catch(() => '')).split('\n').filter(Boolean)) {
    await kubectl(cluster, '-n', namespace, 'patch', object, '--type=merge', '-p', '{"metadata":{"finalizers":null}}').catch(() => undefined);
  }
}

/** Creates a namespace labelled as a suite's, so that a later suite deletes it if this run is interrupted, once earlier ones are gone. */
export async function testNamespace(cluster: Cluster, namespace: string): Promise<void> {
  await settledNamespaces(cluster);
  await kubectl(cluster, 'create', 'namespace', namespace);
  await kubectl(cluster, 'label', 'namespace', namespace, `${TEST_NAMESPACE_LABEL}=${RUN_OWNER}`);
  await installCrds(cluster);
}

/**
 * The CRDs of crds/, applied server-side as an administrator would: the
 * suites' releases share the cluster, and only one release per cluster may
 * own them, so each installs with crds.enabled=false (NODE_VALUES).
 */
export async function installCrds(cluster: Cluster): Promise<void> {
  await kubectl(cluster, 'apply', '--server-side', '--field-manager=didyma-tests', '--force-conflicts', '-f', path.resolve('crds'));
  await kubectl(cluster, 'wait', '--for=condition=Established', '--timeout=60s', 'crd/modeldeployments.didyma.io', 'crd/storageconfigs.didyma.io');
}

export const LOCAL_STORAGE_CLASS = 'didyma-test-local';

const volumesDir = (cluster: Cluster): string => path.join(path.dirname(cluster.kubeconfig), 'volumes');

/**
 * Local PersistentVolumes on the node, one bound ahead to each named claim of
 * the namespace (this node has no provisioner, as an administrator's static
 * volumes): a volume of an earlier run can never reach a later claim.
 */
export async function localVolumes(cluster: Cluster, namespace: string, claims: string[]): Promise<void> {
  const node = (await kubectlJson(cluster, 'get', 'nodes')).items[0].metadata.labels['kubernetes.io/hostname'] as string;
  const objects: object[] = [
    { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: LOCAL_STORAGE_CLASS }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' },
  ];
  for (const claim of claims) {
    const dir = path.join(volumesDir(cluster), namespace, claim);
    fs.mkdirSync(dir, { recursive: true });
    objects.push({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `${namespace}-${claim}`, labels: { [TEST_NAMESPACE_LABEL]: RUN_OWNER } },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: LOCAL_STORAGE_CLASS,
        claimRef: { namespace, name: claim },
        local: { path: dir },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
      },
    });
  }
  await kubectlApply(cluster, objects);
}

/** Deletes a namespace's local volumes and their data. */
export async function removeLocalVolumes(cluster: Cluster, namespace: string, claims: string[]): Promise<void> {
  await kubectl(cluster, 'delete', 'persistentvolumes', ...claims.map((claim) => `${namespace}-${claim}`), '--ignore-not-found', '--wait=false');
  fs.rmSync(path.join(volumesDir(cluster), namespace), { recursive: true, force: true });
}

/** The chart values of an image imported on the node (never pulled), under `prefix` (`image`, `postgresql.image`…). */
export const imageValues = (prefix: string, reference: string): string[] => [
  `${prefix}.repository=${reference.slice(0, reference.lastIndexOf(':'))}`,
  `${prefix}.tag=${reference.slice(reference.lastIndexOf(':') + 1)}`,
  `${prefix}.pullPolicy=Never`,
];

/** Chart values every release on this node needs, given as `--set` values. */
export const NODE_VALUES = [
  // This cluster's Pod and Service ranges (scripts/services/cluster.sh), as a user sets theirs.
  'egress.allowCidrs={10.88.0.0/16,10.96.0.0/16}',
  // Its DNS answers on the node's bridge address, not from kube-system's pods (the NetworkPolicies' default).
  'networkPolicy.egress.dns[0].ipBlock.cidr=10.88.0.1/32',
  // One replica each: a two-core node runs the whole platform.
  'servers.auth.replicas=1',
  'servers.private.replicas=1',
  'servers.public.replicas=1',
  'executor.replicas=1',
  'operator.replicas=1',
  // The CRDs are the cluster's, applied by installCrds.
  'crds.enabled=false',
];

/**
 * The values naming the cluster's API server for the egress policy, read from its `kubernetes` EndpointSlice as an
 * install's lookup would: what a rendering without cluster access (helm template, GitOps) must be given.
 */
export async function kubernetesApiValues(cluster: Cluster): Promise<string[]> {
  const slice = await kubectlJson(cluster, '-n', 'default', 'get', 'endpointslice', 'kubernetes');
  const addresses = (slice.endpoints as Array<{ addresses: string[] }>).flatMap((endpoint) => endpoint.addresses);
  const ports = (slice.ports as Array<{ port: number }>).map((port) => port.port);
  return [`networkPolicy.egress.kubernetesApi.cidrs={${addresses.map((address) => `${address}/${address.includes(':') ? 128 : 32}`).join(',')}}`, `networkPolicy.egress.kubernetesApi.ports={${ports.join(',')}}`];
}

// Images built and imported by this test process, by containerd socket: the work tree and the
// machine's services do not change during a run, and each build takes half a minute.
const imports = new Map<string, unknown>();

function importOnce<T>(what: string, cluster: Cluster, build: () => T): T {
  const key = `${what} ${cluster.containerd}`;
  if (!imports.has(key)) imports.set(key, build());
  return imports.get(key) as T;
}

/** Builds the image from the Dockerfile's recipe and imports it into the cluster's containerd, once per test process; returns its reference. */
export function importProjectImage(cluster: Cluster): string {
  return importOnce('project', cluster, () =>
    execFileSync(process.execPath, [path.resolve('scripts/image/didyma-image.mjs'), '--import', cluster.containerd], { stdio: ['ignore', 'pipe', 'inherit'] })
      .toString()
      .trim(),
  );
}

export type DependencyImages = { postgresql: string; rabbitmq: string; minio: string };

/** Builds the bundled dependencies' images from this machine's PostgreSQL, RabbitMQ and MinIO and imports them, once per test process; their references. */
export function importDependencyImages(cluster: Cluster): DependencyImages {
  return importOnce('dependencies', cluster, () => {
    const output = execFileSync(process.execPath, [path.resolve('scripts/image/dependency-images.mjs'), '--minio', requireEnv('TEST_MINIO_BINARY', 'minio'), '--import', cluster.containerd], { stdio: ['ignore', 'pipe', 'inherit'] });
    return JSON.parse(output.toString()) as DependencyImages;
  });
}

/** The Secret of a release's own database URL, on the host's PostgreSQL, as a user brings one (`externalDatabase.existingSecret`). */
export const hostDatabaseSecret = (namespace: string, database: string): object => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'user-database', namespace },
  stringData: { url: `postgres://didyma:didyma@postgresql:5432/${database}` },
});

/** A release's values for the host's PostgreSQL (through hostDatabaseSecret), RabbitMQ (on `queue`) and Prometheus, with the first staff user's password. */
export const hostServiceValues = (queue: string, adminPassword: string): string[] => [
  'externalDatabase.existingSecret=user-database',
  'externalDatabase.existingSecretKey=url',
  'externalRabbitmq.url=amqp://didyma:didyma@rabbitmq:5672',
  'externalPrometheus.url=http://prometheus:9090',
  `config.extraEnv.DIDYMA_QUEUE_NAME=${queue}`,
  `secrets.adminPassword=${adminPassword}`,
];

/**
 * A supervisor of a new workspace `name`, made as a person is: staff create
 * the workspace and invite them, they register with `password` and log in.
 * Their access token.
 */
export async function invitedSupervisor(auth: Client, staffToken: string, name: string, password: string): Promise<string> {
  const created = await auth.post('/api/auth/workspace', { token: staffToken, json: { name } });
  if (created.status !== 201) throw new Error(`creating workspace ${name}: ${created.status} ${created.text}`);
  const email = `supervisor@${name}.example.test`;
  const invited = await auth.post('/api/auth/invitation', { token: staffToken, json: { email, role: 'supervisor', workspace_id: created.body.id } });
  if (invited.status !== 201) throw new Error(`inviting ${email}: ${invited.status} ${invited.text}`);
  const invitation = new URL(invited.body.invitation_url).searchParams.get('token');
  const registration = { token: invitation, name: 'Supervisor', surname: name, password, preferred_language: 'en', accept_terms: true, accept_privacy: true };
  const registered = await auth.post('/api/auth/register', { json: registration });
  if (registered.status !== 201) throw new Error(`registering ${email}: ${registered.status} ${registered.text}`);
  const login = await auth.post('/api/auth/token/obtain', { json: { email, password, workspace: name } });
  if (login.status !== 200) throw new Error(`logging ${email} in: ${login.status} ${login.text}`);
  return login.body.access as string;
}

/** Builds the image of KServe's model server (scripts/services/kserve.sh) and imports it, once per test process; its reference. */
export function importKServeImage(cluster: Cluster): string {
  return importOnce('kserve', cluster, () =>
    execFileSync(
      process.execPath,
      [path.resolve('scripts/image/kserve-image.mjs'), '--venv', requireEnv('TEST_KSERVE_VENV', 'kserve'), '--server', requireEnv('TEST_KSERVE_SERVER', 'kserve'), '--import', cluster.containerd],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
      .toString()
      .trim(),
  );
}

/** A Service without a selector whose one endpoint is a host port relayed onto the pods' bridge. */
export function hostService(namespace: string, name: string, port: number, hostIp: string, hostPort: number): object[] {
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports: [{ name: 'tcp', port, targetPort: hostPort, protocol: 'TCP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-host`, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'tcp', port: hostPort, protocol: 'TCP' }],
      endpoints: [{ addresses: [hostIp], conditions: { ready: true } }],
    },
  ];
}

/** The host's test services the pods reach through relays: their Service port, then the host port (scripts/services/cluster.sh). */
const HOST_SERVICES = {
  postgresql: [5432, 55432],
  pgbouncer: [5432, 56432],
  rabbitmq: [5672, 55672],
  minio: [9000, 59000],
  prometheus: [9090, 59090],
  jaeger: [4318, 54318],
} as const;

/** Services named as the chart's external services expect, each relayed to the host's own. */
export function hostServices(cluster: Cluster, namespace: string, names: Array<keyof typeof HOST_SERVICES>): object[] {
  return names.flatMap((name) => hostService(namespace, name, HOST_SERVICES[name][0], cluster.hostIp, HOST_SERVICES[name][1]));
}

/** A new database on the host's PostgreSQL, for one release (owned by `owner`, or by the superuser). */
export async function createHostDatabase(name: string, owner?: string): Promise<void> {
  const db = new pg.Client({ connectionString: requireEnv('TEST_DATABASE_URL', 'postgres') });
  await db.connect();
  try {
    await db.query(`CREATE DATABASE ${name}${owner ? ` OWNER ${owner}` : ''}`);
  } finally {
    await db.end();
  }
}

const MANAGED_DATABASE_SECRET = 'managed-database';

/** The user of one of the host's test URLs (postgres.sh's roles): `TEST_DATABASE_RUNTIME_URL` or `TEST_DATABASE_MIGRATION_URL`. */
export const hostRoleOf = (variable: string): string => new URL(requireEnv(variable, 'postgres')).username;

/** That user's password. */
const passwordOf = (variable: string): string => decodeURIComponent(new URL(requireEnv(variable, 'postgres')).password);

/**
 * The host's PostgreSQL as a managed one is run, for a release: a database
 * of its own owned by the migration user, the runtime user's and the
 * migration user's passwords and the server's CA in a Secret. Its objects.
 */
export async function managedHostDatabase(namespace: string, database: string): Promise<object[]> {
  const migrator = hostRoleOf('TEST_DATABASE_MIGRATION_URL');
  await createHostDatabase(database, migrator);
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: MANAGED_DATABASE_SECRET, namespace },
    stringData: { password: passwordOf('TEST_DATABASE_RUNTIME_URL'), 'migration-password': passwordOf('TEST_DATABASE_MIGRATION_URL'), 'ca.crt': fs.readFileSync(requireEnv('TEST_DATABASE_CA_FILE', 'postgres'), 'utf8') },
  };
  return [secret];
}

/**
 * The values of managedHostDatabase's database: the runtime user through the
 * host's PgBouncer in transaction mode, the migration user and the change
 * feed straight to the server, both over TLS checked against the CA.
 */
export const managedDatabaseValues = (database: string): string[] => [
  'externalDatabase.host=pgbouncer',
  'externalDatabase.port=5432',
  `externalDatabase.database=${database}`,
  `externalDatabase.user=${hostRoleOf('TEST_DATABASE_RUNTIME_URL')}`,
  `externalDatabase.existingSecret=${MANAGED_DATABASE_SECRET}`,
  'externalDatabase.passwordKey=password',
  `externalDatabase.migration.user=${hostRoleOf('TEST_DATABASE_MIGRATION_URL')}`,
  'externalDatabase.migration.passwordKey=migration-password',
  'externalDatabase.tls.enabled=true',
  `externalDatabase.tls.caSecret=${MANAGED_DATABASE_SECRET}`,
  'externalDatabase.pooler.mode=transaction',
  'externalDatabase.pooler.directHost=postgresql',
  'externalDatabase.pooler.directPort=5432',
];

/** Drops a database createHostDatabase made, whoever is still connected. */
export async function dropHostDatabase(name: string): Promise<void> {
  const db = new pg.Client({ connectionString: requireEnv('TEST_DATABASE_URL', 'postgres') });
  await db.connect();
  try {
    await db.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await db.end();
  }
}

/** `kubectl apply` of objects (through a temporary file: kubectl reads a List). */
export async function kubectlApply(cluster: Cluster, objects: object[]): Promise<void> {
  const file = path.join(os.tmpdir(), `didyma-apply-${crypto.randomBytes(6).toString('hex')}.json`);
  fs.writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  try {
    await kubectl(cluster, 'apply', '-f', file);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** `kubectl port-forward` from a free local port to a Service's port (through the apiserver and kubelet); stop() ends it. */
export async function portForward(cluster: Cluster, namespace: string, service: string, port: number): Promise<{ url: string; stop(): void }> {
  const child = spawn(cluster.kubectl, ['--kubeconfig', cluster.kubeconfig, '-n', namespace, 'port-forward', `svc/${service}`, `:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const localPort = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const forwarding = output.match(/Forwarding from 127\.0\.0\.1:(\d+)/);
      if (forwarding) resolve(Number(forwarding[1]));
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('exit', () => reject(new Error(`kubectl port-forward svc/${service} exited: ${output}`)));
  });
  return { url: `http://127.0.0.1:${localPort}`, stop: () => child.kill() };
}

/**
 * Kills a pod's first container with SIGKILL through the node's containerd,
 * as a crash or the OOM killer would: the process gets no SIGTERM and runs no
 * shutdown (kubectl cannot: a container's PID 1 ignores SIGKILL from inside).
 */
export async function killContainer(cluster: Cluster, pod: any): Promise<void> {
  const id = String(pod.status.containerStatuses[0].containerID).replace(/^containerd:\/\//, '');
  await tool('ctr', ['--address', cluster.containerd, '--namespace', 'k8s.io', 'tasks', 'kill', '--signal', 'SIGKILL', id], {});
}

/** A suite's own names, unique to this run: its namespace, host database, queue and bucket, `dy-<prefix>-<suffix>` or alike. */
export function suiteNames(prefix: string): { suffix: string; namespace: string; database: string; queue: string; bucket: string } {
  const suffix = crypto.randomBytes(4).toString('hex');
  return { suffix, namespace: `dy-${prefix}-${suffix}`, database: `didyma_${prefix}_${suffix}`, queue: `didyma.${prefix}.${suffix}`, bucket: `dy-${prefix}-${suffix}` };
}

/** Where retagImage puts its references: not the build's repository, whose earlier tags the next build's import removes. */
const RETAGGED_REPOSITORY = 'didyma.local/didyma-retagged';

/**
 * The imported `image` under another reference on the node (`ctr images
 * tag`: the same content, no rebuild), as a registry offers a new release:
 * what an image bump changes in a release's values. Its reference.
 */
export function retagImage(cluster: Cluster, image: string, tag: string): string {
  const reference = `${RETAGGED_REPOSITORY}:${tag}`;
  execFileSync('ctr', ['--address', cluster.containerd, '--namespace', 'k8s.io', 'images', 'tag', '--force', image, reference], { stdio: 'pipe' });
  return reference;
}

/** Removes a reference retagImage made (the content stays while another reference or a container holds it). */
export function removeRetaggedImage(cluster: Cluster, reference: string): void {
  if (!reference.startsWith(`${RETAGGED_REPOSITORY}:`)) throw new Error(`${reference} was not made by retagImage`);
  execFileSync('ctr', ['--address', cluster.containerd, '--namespace', 'k8s.io', 'images', 'rm', reference], { stdio: 'pipe' });
}

/** Runs `body` on a client of a release's database on the host's PostgreSQL, as the superuser. */
export async function withHostDatabase<T>(database: string, body: (db: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(requireEnv('TEST_DATABASE_URL', 'postgres'));
  url.pathname = `/${database}`;
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    return await body(db);
  } finally {
    await db.end();
  }
}

/** How many migrations a release's database on the host's PostgreSQL has recorded as applied. */
export const appliedMigrations = (database: string): Promise<number> =>
  withHostDatabase(database, async (db) => Number((await db.query('SELECT count(*) AS n FROM knex_migrations')).rows[0].n));

/** Whether a TCP connection to `host:port` opens. */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A client of a Service's cluster address once it takes connections: a pod
 * Ready is not yet an endpoint kube-proxy routes to, and until it is, the
 * address refuses connections.
 */
export async function serviceClient(cluster: Cluster, namespace: string, service: string, port: number): Promise<Client> {
  const { clusterIP } = (await kubectlJson(cluster, '-n', namespace, 'get', 'service', service)).spec as { clusterIP: string };
  await waitFor(`Service ${service} to take connections`, () => connects(clusterIP, port), 60_000, 250);
  return new Client(`http://${clusterIP}:${port}`);
}
