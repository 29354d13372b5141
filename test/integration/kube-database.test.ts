import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { loadYaml } from '@kubernetes/client-node';
import YAML from 'yaml';
import type { KubeApi } from '../../infra/kube/api.js';
import type { KubeObject } from '../../infra/kube/resources.js';
import { loadConfig } from '../../kernel/config/config.js';
import { helmPath, KUBE_API_VALUES, kubeconfigPath, testNamespace } from '../support/kube.js';

// The chart's values for a managed PostgreSQL and RabbitMQ as a platform team
// runs them (host, users and passwords of existing Secrets, TLS with a CA, a
// transaction pooler, a migration user apart): what each pod gets, checked
// against the platform's own config loader and applied (server-side dry
// run) on the test control plane; and the one-URL values of before, unchanged.

const run = promisify(execFile);
const CHART = 'charts/didyma';

const MANAGED = [
  'secrets.existingSecret=didyma-keys',
  'externalDatabase.host=db-pooler.example.internal',
  'externalDatabase.port=6432',
  'externalDatabase.database=didyma',
  'externalDatabase.user=didyma_app',
  'externalDatabase.existingSecret=db-credentials',
  'externalDatabase.migration.user=didyma_owner',
  'externalDatabase.tls.enabled=true',
  'externalDatabase.tls.caConfigMap=db-ca',
  'externalDatabase.pooler.mode=transaction',
  'externalDatabase.pooler.directHost=db.example.internal',
  'externalRabbitmq.host=mq.example.internal',
  'externalRabbitmq.user=didyma',
  'externalRabbitmq.vhost=didyma',
  'externalRabbitmq.existingSecret=mq-credentials',
  'externalRabbitmq.tls.enabled=true',
  'externalRabbitmq.tls.caSecret=mq-ca',
].flatMap((value) => ['--set', value]);
const POOLS = ['--set-json', 'externalDatabase.poolMaxPerComponent={"public":20,"executor":4,"migrate":2}'];

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Container {
  name: string;
  env?: EnvVar[];
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  volumes?: Array<{ name: string; secret?: { secretName: string }; configMap?: { name: string } }>;
}

async function helm(...args: string[]): Promise<string> {
  try {
    return (await run(helmPath(), args, { maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`helm ${args.join(' ')} failed:\n${stderr}\n${stdout}`);
  }
}

/** The pods (Deployments and Jobs) of a rendering by name. */
function podsOf(objects: KubeObject[]): Map<string, PodSpec> {
  return new Map(objects.filter((o) => ['Deployment', 'Job'].includes(o.kind)).map((o) => [o.metadata.name, (o as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec]));
}

/** The platform's config as a container's plain values make it, passwords standing in for their Secrets. */
function configOf(container: Container) {
  const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? `secret-of-${e.valueFrom?.secretKeyRef?.key ?? 'field'}`]));
  return loadConfig({ ...env, DIDYMA_DATA_DIR: '/tmp/didyma' });
}

const envOf = (container: Container) => new Map((container.env ?? []).map((e) => [e.name, e]));

describe('Kubernetes: the chart on a managed PostgreSQL and RabbitMQ', function () {
  this.timeout(180_000);
  let api: KubeApi;
  let namespace: string;

  before(async () => {
    const kube = await testNamespace('dy-chart-db');
    namespace = kube.namespace;
    api = await kube.api();
  });

  const render = async (...args: string[]): Promise<KubeObject[]> =>
    YAML.parseAllDocuments(await helm('template', 'dy', CHART, '--namespace', namespace, '--kubeconfig', kubeconfigPath(), '--set', 'crds.enabled=false', ...KUBE_API_VALUES, ...args))
      .filter((doc) => doc.contents)
      .map((doc) => loadYaml<KubeObject>(String(doc)));

  it('gives the servers and executors the runtime user through the pooler, LISTEN direct, TLS with the CA, and their own pool sizes', async () => {
    const objects = await render(...MANAGED, ...POOLS);
    const pods = podsOf(objects);
    for (const name of ['dy-didyma-auth', 'dy-didyma-private', 'dy-didyma-public', 'dy-didyma-executor']) {
      const pod = pods.get(name)!;
      const container = pod.containers[0]!;
      const config = configOf(container);
      expect(config.databaseUrl, name).to.equal('postgres://didyma_app:secret-of-password@db-pooler.example.internal:6432/didyma');
      expect(config.databaseListenUrl, name).to.equal('postgres://didyma_app:secret-of-password@db.example.internal:5432/didyma');
      expect(config.databasePooler, name).to.equal('transaction');
      expect(config.amqpUrl, name).to.equal('amqps://didyma:secret-of-password@mq.example.internal/didyma');
      expect(envOf(container).get('DATABASE_PASSWORD')?.valueFrom?.secretKeyRef, name).to.deep.equal({ name: 'db-credentials', key: 'password' });
      expect(envOf(container).get('DIDYMA_AMQP_PASSWORD')?.valueFrom?.secretKeyRef, name).to.deep.equal({ name: 'mq-credentials', key: 'password' });
      const migrationVariables = [...envOf(container).keys()].filter((key) => /MIGRATION|RUNTIME_ROLE/.test(key));
      expect(migrationVariables, `${name}: nothing of the migration user`).to.deep.equal([]);
      // The CA files where the config reads them: the mounts of the volumes of the ConfigMap and Secret named.
      const mounts = new Map((container.volumeMounts ?? []).map((m) => [m.name, m.mountPath]));
      expect(config.databaseCaFile, name).to.equal(`${mounts.get('database-ca')}/ca.crt`);
      expect(config.amqpCaFile, name).to.equal(`${mounts.get('amqp-ca')}/ca.crt`);
      const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v.configMap?.name ?? v.secret?.secretName]));
      expect([volumes.get('database-ca'), volumes.get('amqp-ca')], name).to.deep.equal(['db-ca', 'mq-ca']);
    }
    expect(configOf(pods.get('dy-didyma-public')!.containers[0]!).databasePoolMax).to.equal(20);
    expect(configOf(pods.get('dy-didyma-executor')!.containers[0]!).databasePoolMax).to.equal(4);
    expect(configOf(pods.get('dy-didyma-auth')!.containers[0]!).databasePoolMax, 'the ConfigMap’s, unless overridden').to.equal(10);
    expect(objects.filter((o) => o.kind === 'Secret'), 'no chart Secret: the URLs carry no password').to.deep.equal([]);
    for (const object of objects.filter((o) => ['Deployment', 'Job', 'ConfigMap'].includes(o.kind))) await api.apply({ ...object, metadata: { ...object.metadata, namespace } }, 'helm-test', 'All');
  });

  it('runs the migration Job as the migration user straight to the server, granting rows to the runtime user', async () => {
    const job = podsOf(await render(...MANAGED, ...POOLS)).get('dy-didyma-migrate')!;
    for (const container of [...job.initContainers!, ...job.containers]) {
      const config = configOf(container);
      expect(config.databaseMigrationUrl, container.name).to.equal('postgres://didyma_owner:secret-of-migration-password@db.example.internal:5432/didyma');
      expect(config.databaseRuntimeRole, container.name).to.equal('didyma_app');
      expect(config.databasePoolMax, container.name).to.equal(2);
      expect(envOf(container).get('DATABASE_MIGRATION_PASSWORD')?.valueFrom?.secretKeyRef).to.deep.equal({ name: 'db-credentials', key: 'migration-password' });
      expect(config.databaseCaFile).to.equal('/etc/didyma/database-ca/ca.crt');
    }
  });

  it('passes helm lint --strict with the managed values, and its schema refuses a pooler mode the platform does not know', async () => {
    expect(await helm('lint', '--strict', CHART, ...KUBE_API_VALUES, ...MANAGED, ...POOLS)).to.include('0 chart(s) failed');
    const refusal = await helm('lint', '--strict', CHART, ...KUBE_API_VALUES, '--set', 'externalDatabase.pooler.mode=session').then(
      () => 'linted',
      (error: Error) => error.message,
    );
    expect(refusal).to.match(/externalDatabase\/pooler\/mode': value must be one of 'none', 'transaction'/);
  });

  it('turns LISTEN off, or refuses a transaction pooler with nowhere to LISTEN, naming the values', async () => {
    const off = podsOf(await render(...MANAGED, '--set', 'externalDatabase.pooler.directHost=,externalDatabase.pooler.listen=false'));
    const config = configOf(off.get('dy-didyma-public')!.containers[0]!);
    expect([config.databaseListen, config.databaseListenUrl]).to.deep.equal([false, undefined]);
    const migrate = configOf(off.get('dy-didyma-migrate')!.initContainers![0]!);
    expect(migrate.databaseMigrationUrl, 'no direct host: the host itself').to.equal('postgres://didyma_owner:secret-of-migration-password@db-pooler.example.internal:6432/didyma');
    const refusal = await render(...MANAGED, '--set', 'externalDatabase.pooler.directHost=').then(
      () => 'rendered',
      (error: Error) => error.message,
    );
    expect(refusal).to.match(/externalDatabase\.pooler\.mode=transaction: a transaction pooler drops LISTEN .*pooler\.directHost.*pooler\.listen=false/);
    const noUser = await render('--set', 'secrets.existingSecret=k,externalDatabase.host=db,externalDatabase.existingSecret=s').then(
      () => 'rendered',
      (error: Error) => error.message,
    );
    expect(noUser).to.match(/externalDatabase\.user is required with externalDatabase\.host/);
  });

  it('keeps the one-URL values working as before: the URL from the Secret, nothing of the managed ones', async () => {
    const objects = await render('--set', 'secrets.existingSecret=didyma-keys,externalDatabase.existingSecret=db-url,externalRabbitmq.existingSecret=mq-url');
    for (const [name, pod] of podsOf(objects)) {
      for (const container of [...(pod.initContainers ?? []), ...pod.containers].filter((c) => envOf(c).has('DATABASE_URL'))) {
        const env = envOf(container);
        expect(env.get('DATABASE_URL')!.valueFrom?.secretKeyRef, name).to.deep.equal({ name: 'db-url', key: 'database-url' });
        expect(env.get('DIDYMA_AMQP_URL')!.valueFrom?.secretKeyRef, name).to.deep.equal({ name: 'mq-url', key: 'amqp-url' });
        const managed = [...env.keys()].filter((key) => /PASSWORD$|POOLER|LISTEN|CA_FILE|MIGRATION|RUNTIME_ROLE/.test(key) && key !== 'DIDYMA_ADMIN_PASSWORD');
        expect(managed, name).to.deep.equal([]);
        expect((pod.volumes ?? []).map((v) => v.name), name).to.not.include.members(['database-ca', 'amqp-ca']);
      }
    }
  });

  it('takes a migration URL and a LISTEN URL from keys of the Secret with the one-URL values', async () => {
    const sets = 'secrets.existingSecret=k,externalDatabase.existingSecret=db,externalDatabase.pooler.mode=transaction,externalDatabase.pooler.listenUrlKey=listen-url,externalDatabase.migration.urlKey=migration-url,externalDatabase.migration.runtimeRole=didyma_app';
    const pods = podsOf(await render('--set', sets));
    const server = envOf(pods.get('dy-didyma-private')!.containers[0]!);
    expect(server.get('DATABASE_LISTEN_URL')?.valueFrom?.secretKeyRef).to.deep.equal({ name: 'db', key: 'listen-url' });
    expect(server.has('DATABASE_MIGRATION_URL')).to.equal(false);
    const migrate = envOf(pods.get('dy-didyma-migrate')!.initContainers![0]!);
    expect(migrate.get('DATABASE_MIGRATION_URL')?.valueFrom?.secretKeyRef).to.deep.equal({ name: 'db', key: 'migration-url' });
    expect(migrate.get('DATABASE_RUNTIME_ROLE')?.value).to.equal('didyma_app');
  });
});
