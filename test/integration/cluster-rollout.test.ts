import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client, type Reply } from '../support/http.js';
import { IRIS, modelPayload, upload } from '../support/fixtures.js';
import { emptyAndRemoveBucket, s3Admin } from '../support/s3-admin.js';
import { deleteWorkQueue, requireEnv } from '../support/services.js';
import { credentialsNamespaceOf, waitFor } from '../support/kube.js';
import { dropHostDatabase, freshTestNamespace, helm, hostRoleOf, hostServiceValues, hostServices, imageValues, importProjectImage, killContainer, kubectl, kubectlApply, kubectlJson, managedDatabaseValues, managedHostDatabase, NODE_VALUES, runningCluster, serviceClient, suiteNames, withHostDatabase, type Cluster } from '../support/cluster.js';

const RELEASE = 'didyma';
const CHART = 'charts/didyma';
const PASSWORD = 'Cluster-Pass-42';
const LEASE = `${RELEASE}-operator`;
const COMPONENTS = ['auth', 'private', 'public', 'executor', 'operator'];
const DEMO_PORT = 8090;
const DEMO_URL = `http://demo-model:${DEMO_PORT}`;
const FINAL = ['COMPLETED', 'ERROR'];
// Each inference takes this long: at the steady rate, the executor being replaced has runs under way.
const INFERENCE_MS = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `body` every `periodMs` (or right after it, when it took longer) until stopped. */
function every(periodMs: number, body: () => Promise<void>): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      await body();
      await sleep(Math.max(0, periodMs - (Date.now() - started)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/**
 * The chart's availability promises on the real single-node cluster, with one
 * release: two operator replicas hand the leader Lease over when the leader
 * dies without a word, and `helm upgrade` rolls every component while a client
 * keeps using the APIs at a steady rate, without one failed request or lost
 * invocation (readiness, preStop delays, drains, PodDisruptionBudgets). Its
 * database is run as a managed one: the runtime user through a PgBouncer in
 * transaction mode, the migration user apart, TLS checked against the CA.
 */
/** A socket closed before any byte of the answer (undici's `other side closed`), or reset. */
function closedBeforeAnswer(cause: Error | undefined): boolean {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

describe('Cluster: operator failover and helm upgrade under steady load', function () {
  this.timeout(900_000);
  const { suffix, namespace, database, queue, bucket } = suiteNames('ro');
  let cluster: Cluster;
  let image: string;
  let auth: Client;
  let priv: Client;
  let pub: Client;

  const values = (...extra: string[]): string[] =>
    [...imageValues('image', image), ...hostServiceValues(queue, PASSWORD), ...managedDatabaseValues(database), ...NODE_VALUES, 'operator.replicas=2', ...extra].flatMap((value) => ['--set', value]);

  /** The component's pods, those terminating too unless `live`. */
  const podsOf = async (component: string, live = true): Promise<any[]> =>
    (await kubectlJson(cluster, '-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=${component}`)).items.filter(
      (pod: any) => !live || !pod.metadata.deletionTimestamp,
    );
  const ready = (object: any): boolean => object.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ?? false;
  const leaseSpec = async () => (await kubectlJson(cluster, '-n', namespace, 'get', 'lease', LEASE)).spec ?? {};
  /** The pod of a holder identity (`<pod name>_<random>`, operator/start.ts). */
  const podOfHolder = (holder: string | undefined) => holder?.slice(0, holder.lastIndexOf('_'));

  const login = async (): Promise<string> => {
    const reply = await auth.post('/api/auth/token/obtain', { json: { email: 'admin@didyma.local', password: PASSWORD, workspace: 'default' } });
    expect(reply.status, reply.text).to.equal(200);
    return reply.body.access;
  };

  /** A deployment of the demo model server, registered through the private API; its ModelDeployment once the operator made it Ready. */
  async function readyDeployment(token: string, key: string): Promise<any> {
    const created = await priv.post('/api/deployment', {
      token,
      json: {
        deployment_key: key,
        registry_connector_class: 'didyma.registry.OpenInferenceRegistryConnector',
        registry_connector_init: { model_registry_url: DEMO_URL, tracking_server_url: DEMO_URL },
        server_proxy_class: 'didyma.proxy.OpenInferenceServerProxy',
        server_proxy_init: { server_proxy_url: DEMO_URL },
      },
    });
    expect(created.status, created.text).to.equal(201);
    return waitFor(`ModelDeployment ${key} Ready`, async () => {
      const found = (await kubectlJson(cluster, '-n', namespace, 'get', 'mdep')).items.find((item: any) => item.metadata.name.startsWith(`default-${key}-`));
      return ready(found) && found;
    }, 300_000, 500);
  }

  before(async () => {
    cluster = runningCluster();
    image = importProjectImage(cluster);
    await s3Admin().makeBucket(bucket);
    await freshTestNamespace(cluster, namespace);
    await kubectlApply(cluster, [...hostServices(cluster, namespace, ['postgresql', 'pgbouncer', 'rabbitmq', 'minio', 'prometheus']), ...(await managedHostDatabase(namespace, database))]);
    await kubectl(cluster, '-n', namespace, 'create', 'deployment', 'demo-model', `--image=${image}`, `--port=${DEMO_PORT}`, '--', 'node', 'bin/didyma.js', 'demo-model-server', '--port', String(DEMO_PORT), '--delay-ms', String(INFERENCE_MS));
    await kubectl(cluster, '-n', namespace, 'expose', 'deployment', 'demo-model');
    await helm(cluster, 'install', RELEASE, CHART, '-n', namespace, ...values(), '--wait', '--timeout', '8m');
    await kubectl(cluster, '-n', namespace, 'rollout', 'status', 'deployment/demo-model', '--timeout=300s');
    const service = (component: string, port: number) => serviceClient(cluster, namespace, `${RELEASE}-${component}`, port);
    auth = await service('auth', 8080);
    priv = await service('private', 8081);
    pub = await service('public', 8082);
  });

  after(async () => {
    if (!cluster) return;
    await helm(cluster, '-n', namespace, 'uninstall', RELEASE, '--wait').catch(() => undefined);
    await kubectl(cluster, 'delete', 'namespace', namespace, credentialsNamespaceOf(namespace), '--wait=false', '--ignore-not-found').catch(() => undefined);
    await deleteWorkQueue(requireEnv('TEST_AMQP_URL', 'rabbitmq'), queue);
    await dropHostDatabase(database).catch(() => undefined);
    await emptyAndRemoveBucket(s3Admin(), bucket).catch(() => undefined);
  });

  it('hands the Lease to the standby operator when the leader is killed, which then reconciles a new deployment', async () => {
    const operators = await waitFor('two Ready operator pods', async () => {
      const pods = await podsOf('operator');
      return pods.length === 2 && pods.every(ready) && pods;
    }, 300_000, 500);
    const names = operators.map((pod) => pod.metadata.name as string);
    const before = await waitFor('an operator pod holding the Lease', async () => {
      const spec = await leaseSpec();
      return names.includes(podOfHolder(spec.holderIdentity) ?? '') && spec;
    }, 120_000, 500);
    const leader = operators.find((pod) => pod.metadata.name === podOfHolder(before.holderIdentity))!;
    const standby = names.find((name) => name !== leader.metadata.name)!;

    // No SIGTERM, so no hand-back: the standby may only take the Lease once the leader has not renewed it for a whole lease.
    await killContainer(cluster, leader);
    // Gone for good, so that the takeover is the standby's and not a restarted container's in the same pod.
    await kubectl(cluster, '-n', namespace, 'delete', 'pod', leader.metadata.name, '--grace-period=0', '--force');
    // The dead leader's last renewal, from which the standby counts the lease out.
    const last = await leaseSpec();
    expect(last.holderIdentity).to.equal(before.holderIdentity);
    const holders = [before.holderIdentity as string];
    const after = await waitFor('the standby operator to hold the Lease', async () => {
      const spec = await leaseSpec();
      if (spec.holderIdentity !== holders.at(-1)) holders.push(spec.holderIdentity ?? '');
      return podOfHolder(spec.holderIdentity) === standby && spec;
    }, 300_000, 250);
    // Straight from the dead leader to the standby: never handed back (an empty holder), one transition.
    expect(holders).to.deep.equal([before.holderIdentity, after.holderIdentity]);
    expect(after.leaseTransitions).to.equal((before.leaseTransitions ?? 0) + 1);
    // Never before a whole lease without renewal (two leaders), and within it once the standby's retries are counted:
    // it sees the last record within one retry period (a fifth of the lease) and tries again at most one later.
    const leaseMs = (last.leaseDurationSeconds as number) * 1000;
    const tookOver = Date.parse(after.acquireTime) - Date.parse(last.renewTime);
    expect(tookOver, 'ms from the last renewal to the takeover').to.be.within(leaseMs, leaseMs + (2 * leaseMs) / 5 + 5_000);
    console.log(`      takeover ${tookOver} ms after the dead leader's last renewal (lease ${leaseMs} ms)`);

    const token = await login();
    const deployment = await readyDeployment(token, 'after-failover');
    const proxyConfig = await kubectlJson(cluster, '-n', namespace, 'get', 'configmap', '-l', `didyma.io/proxy-config=${RELEASE}-proxy-config`);
    expect(JSON.stringify(proxyConfig.items.map((item: any) => item.data))).to.include('after-failover');
    // The new leader reconciled it: the Events about it are all its own.
    const events = (await kubectlJson(cluster, '-n', namespace, 'get', 'events', '--field-selector', `involvedObject.name=${deployment.metadata.name}`)).items;
    expect(events).to.have.length.greaterThan(0);
    expect(new Set(events.map((event: any) => event.reportingInstance))).to.deep.equal(new Set([after.holderIdentity]));
    // The Deployment's replacement pod stands by: the Lease stays where it is.
    await waitFor('a replacement operator pod Ready', async () => {
      const pods = await podsOf('operator');
      return pods.length === 2 && pods.every(ready);
    }, 300_000, 500);
    expect((await leaseSpec()).holderIdentity).to.equal(after.holderIdentity);
  });

  it('rolls every component with helm upgrade while a client posts and polls at a steady rate: no failed request, no lost invocation', async () => {
    const token = await login();
    const storage = await priv.post('/api/storage', {
      token,
      json: { storage_key: 'cards', storage_class: 'didyma.storage.S3Storage', connector_init: { endpoint: 'http://minio:9000', bucket_name: bucket, access_key: requireEnv('TEST_S3_ACCESS_KEY', 'minio'), secret_key: requireEnv('TEST_S3_SECRET_KEY', 'minio') } },
    });
    expect(storage.status, storage.text).to.equal(201);
    await readyDeployment(token, 'load');
    const card = await upload(priv, token, 'cards', '# Iris', 'iris.md');
    const registered = await priv.post('/api/platform_model', { token, json: modelPayload('iris-classifier', '1', card.file_id) });
    expect(registered.status, registered.text).to.equal(201);
    const model = '/api/model/iris-classifier/version/1';
    const opened = await pub.post(`${model}/session`, { token });
    expect(opened.status, opened.text).to.equal(201);
    const invocations = `${model}/session/${opened.body.id}/invocation`;

    // Every request of the load, and each one that failed: a connection error, or any answer but the expected one.
    const counts: Record<string, number> = { post: 0, poll: 0, private: 0, auth: 0 };
    const failures: string[] = [];
    const resent: string[] = [];
    const call = async (what: string, expected: number, send: () => Promise<Reply>, again = true): Promise<Reply | undefined> => {
      counts[what]!++;
      try {
        const reply = await send();
        if (reply.status === expected) return reply;
        failures.push(`${new Date().toISOString()} ${what}: ${reply.status} ${reply.text.slice(0, 200)}`);
      } catch (error) {
        const { message, cause } = error as Error & { cause?: Error };
        const line = `${new Date().toISOString()} ${what}: ${message}${cause ? ` (${cause.message})` : ''}`;
        // An idle kept-alive connection the old pod closes as the client sends on it: HTTP lets a client send an
        // idempotent request again on a new connection (RFC 9112, 9.3.1), as a posted invocation with an Idempotency-Key is.
        if (again && closedBeforeAnswer(cause)) {
          resent.push(line);
          return call(what, expected, send, false);
        }
        failures.push(line);
      }
      return undefined;
    };
    const statuses = new Map<string, string>();
    let next = 0;
    const load = [
      every(500, async () => {
        const key = crypto.randomUUID();
        const reply = await call('post', 201, () => pub.post(invocations, { token, headers: { 'idempotency-key': key }, json: { type: 'PREDICT', request: { type: 'FEATURES', body: IRIS } } }));
        if (reply) statuses.set(reply.body.id, reply.body.status ?? 'QUEUED');
      }),
      every(250, async () => {
        const pending = [...statuses].filter(([, status]) => !FINAL.includes(status)).map(([id]) => id);
        if (pending.length === 0) return;
        const id = pending[next++ % pending.length]!;
        const reply = await call('poll', 200, () => pub.get(`${invocations}/${id}/check_progress`, { token }));
        if (reply) statuses.set(id, reply.body.status);
      }),
      every(1000, async () => void (await call('private', 200, () => priv.get('/api/deployment/load', { token })))),
      every(1000, async () => void (await call('auth', 200, () => auth.get('/api/auth/token/verify', { token })))),
    ];
    try {
      const old = new Map<string, string[]>();
      for (const component of COMPONENTS) old.set(component, (await podsOf(component)).map((pod) => pod.metadata.name));
      await waitFor('the load under way', async () => statuses.size >= 10, 120_000, 250);
      // A changed pod annotation: every Deployment rolls.
      await helm(cluster, 'upgrade', RELEASE, CHART, '-n', namespace, ...values(`podAnnotations.rollout=${suffix}`), '--wait', '--timeout', '10m');
      // The old pods drain after the new ones are Ready: the load goes on until the last is gone.
      await waitFor('every old pod gone', async () => {
        for (const component of COMPONENTS) {
          const now = (await podsOf(component, false)).map((pod) => pod.metadata.name);
          if (now.some((name) => old.get(component)!.includes(name))) return false;
        }
        return true;
      }, 600_000, 1000);
      await sleep(2000);
    } finally {
      for (const loop of load) await loop.stop();
    }
    const ids = [...statuses.keys()];
    const final = await waitFor(`${ids.length} invocations to finish`, async () => {
      for (const [id, status] of statuses) {
        if (FINAL.includes(status)) continue;
        const reply = await pub.get(`${invocations}/${id}/check_progress`, { token });
        if (reply.status === 200) statuses.set(id, reply.body.status);
      }
      return [...statuses.values()].every((status) => FINAL.includes(status)) && [...statuses.values()];
    }, 300_000, 1000);
    const completed = final.filter((status) => status === 'COMPLETED').length;
    const requests = Object.values(counts).reduce((sum, count) => sum + count, 0);
    console.log(
      `      helm upgrade under load: ${requests} requests (${counts.post} posted invocations, ${counts.poll} polls, ${counts.private} private, ${counts.auth} auth), ${failures.length} failed, ${resent.length} sent again; ` +
        `${ids.length} invocations, ${completed} completed, ${ids.length - completed} not`,
    );
    if (resent.length) console.log(`      sent again after a connection closed before any answer:\n${resent.map((line) => `        ${line}`).join('\n')}`);
    expect(failures).to.deep.equal([]);
    // Each invocation once: a post sent again was answered from its Idempotency-Key, never queued twice.
    expect(final).to.deep.equal(ids.map(() => 'COMPLETED'));
    const listed = (await pub.get(`${invocations}?limit=1000`, { token })).body as Array<{ id: string }>;
    expect(listed.map((row) => row.id).sort(), 'the invocations the session holds').to.deep.equal([...ids].sort());
    for (const component of COMPONENTS) {
      const rolled = (await podsOf(component)).map((pod) => pod.metadata.annotations?.rollout);
      expect(rolled, `${component} pods rolled`).to.have.length.greaterThan(0);
      expect(new Set(rolled), `${component} pods rolled`).to.deep.equal(new Set([suffix]));
    }
  });

  it('holds its database connections as the runtime user over TLS only, the schema owned by the migration user', async () => {
    await withHostDatabase(database, async (db) => {
      const { rows } = await db.query(
        'SELECT a.usename, s.ssl, count(*)::int AS connections FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.datname = $1 AND a.pid <> pg_backend_pid() GROUP BY 1, 2',
        [database],
      );
      expect(rows, 'connections to the release database').to.deep.equal([{ usename: hostRoleOf('TEST_DATABASE_RUNTIME_URL'), ssl: true, connections: rows[0]?.connections }]);
      const owners = await db.query(`SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'`);
      expect(owners.rows.map((row) => row.tableowner)).to.deep.equal([hostRoleOf('TEST_DATABASE_MIGRATION_URL')]);
    });
  });
});
