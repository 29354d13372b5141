import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { VersionApi, loadYaml } from '@kubernetes/client-node';
import YAML from 'yaml';
import type { KubeApi } from '../../infra/kube/api.js';
import { statusOf } from '../../infra/kube/errors.js';
import { resourceRef, secretRef, type KubeObject } from '../../infra/kube/resources.js';
import { configEntryKey, proxyConfigMapName, proxyConfigSelector, secretName } from '../../infra/kube/names.js';
import { readSecret } from '../../infra/kube/secrets.js';
import { DesiredStateWriter } from '../../infra/kube/writer.js';
import { createLogger } from '../../infra/logging/logger.js';
import { loadConfig } from '../../kernel/config/config.js';
import { startDemoModelServer } from '../support/fixtures.js';
import { apiFor, helmPath, installKServeCrd, KUBE_API_VALUES, kubeconfigAs, kubeconfigPath, startTestOperator, testNamespace, testNamespaceName, waitFor } from '../support/kube.js';

const run = promisify(execFile);
const CHART = 'charts/didyma';

/** The components with pod settings of their own, by their values' path (the migration Job's pod does not spread). */
const POD_SETTINGS: Record<string, { object: string; spreads: boolean }> = {
  'servers.auth': { object: 'Deployment/dy-didyma-auth', spreads: true },
  'servers.private': { object: 'Deployment/dy-didyma-private', spreads: true },
  'servers.public': { object: 'Deployment/dy-didyma-public', spreads: true },
  executor: { object: 'Deployment/dy-didyma-executor', spreads: true },
  operator: { object: 'Deployment/dy-didyma-operator', spreads: true },
  migration: { object: 'Job/dy-didyma-migrate', spreads: false },
};
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
/** Every pod setting of every component: an env var from a Secret, a CA bundle mounted, annotations, a priority class, a zone spread. */
const podSettings = (component: string, spreads: boolean): Record<string, unknown> => ({
  extraEnv: [{ name: 'MODEL_SERVER_TOKEN', valueFrom: { secretKeyRef: { name: 'model-server', key: 'token' } } }, { name: 'COMPONENT_NAME', value: component }],
  extraVolumes: [{ name: 'model-server-ca', configMap: { name: 'model-server-ca' } }],
  extraVolumeMounts: [{ name: 'model-server-ca', mountPath: '/etc/didyma/ca', readOnly: true }],
  podAnnotations: { 'example.com/component': component, 'example.com/shared': 'component' },
  priorityClassName: 'didyma-critical',
  ...(spreads ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' }] } : {}),
});
const POD_SETTINGS_ON = [
  ...Object.entries(POD_SETTINGS).flatMap(([path, { spreads }]) =>
    Object.entries(podSettings(path, spreads)).flatMap(([key, value]) => ['--set-json', `${path}.${key}=${JSON.stringify(value)}`]),
  ),
  ...['podAnnotations.example\\.com/shared=chart', 'podAnnotations.example\\.com/chart=yes', `image.digest=${DIGEST}`].flatMap((value) => ['--set', value]),
];

/** Values that switch every optional part on (TLS, HPAs, ServiceMonitors, alerts, metrics token, MinIO host in the allow list, every pod setting). */
const EVERYTHING = [
  'servers.auth.hpa.enabled=true',
  'servers.private.hpa.enabled=true',
  'servers.public.hpa.enabled=true',
  'executor.hpa.enabled=true',
  'serviceMonitor.enabled=true',
  'alerts.enabled=true',
  'secrets.metricsToken=scrape-me',
  'ingress.tlsSecretName=didyma-tls',
  'ingress.className=nginx',
  'externalMinio.endpoint=http://minio.storage:9000',
  'config.urlAllow=10.0.0.0/8',
  'workloadIdentity.serviceAccounts[0].namespace=ci',
  'workloadIdentity.serviceAccounts[0].service_account=runner',
  'workloadIdentity.serviceAccounts[0].workspace=team-a',
]
  .flatMap((value) => ['--set', value])
  .concat(POD_SETTINGS_ON);

/** The chart's own PostgreSQL, RabbitMQ and MinIO instead of external ones. */
const BUNDLED = ['postgresql.enabled=true', 'rabbitmq.enabled=true', 'minio.enabled=true', 'config.urlAllow=10.0.0.0/8'].flatMap((value) => ['--set', value]);

const KUBE_API = KUBE_API_VALUES;
/** What rendering without cluster access (helm template, Argo CD) needs: every key and password given, none generated, the API server named. */
const OFFLINE = [...['secrets.existingSecret=didyma-keys'].flatMap((value) => ['--set', value]), ...KUBE_API];
const OFFLINE_BUNDLED = [...OFFLINE, ...BUNDLED, ...['postgresql.password=pg', 'rabbitmq.password=mq', 'minio.rootPassword=minio-root'].flatMap((value) => ['--set', value])];

async function helm(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(helmPath(), args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`helm ${args.join(' ')} failed:\n${stderr}\n${stdout}`);
  }
}

describe('Kubernetes: the Helm chart', function () {
  this.timeout(180_000);
  let api: KubeApi;
  let namespace: string;
  let credentialsNamespace: string;
  let kubeVersion: string;

  before(async () => {
    const kube = await testNamespace('dy-chart');
    ({ namespace, credentialsNamespace } = kube);
    api = await kube.api();
    kubeVersion = (await api.kc.makeApiClient(VersionApi).getCode()).gitVersion.replace(/[-+].*$/, '');
  });

  /**
   * The chart's objects as an install renders them (lookups answered by the cluster), typed through loadYaml (client-node
   * serializes by its models' field names), in the test namespace; without the CRDs, which the test cluster has and no release owns.
   */
  const render = async (...args: string[]) =>
    objectsOf((await helm('template', 'dy', CHART, '--namespace', namespace, '--kubeconfig', kubeconfigPath(), '--dry-run=server', '--set', 'crds.enabled=false', ...KUBE_API, ...args)).stdout);
  /** The same without cluster access, as `helm template` alone and Argo CD render. */
  const renderOffline = async (...args: string[]) => objectsOf((await helm('template', 'dy', CHART, '--namespace', namespace, '--kube-version', kubeVersion, ...args)).stdout);
  const objectsOf = (stdout: string) =>
    YAML.parseAllDocuments(stdout)
      .filter((doc) => doc.contents)
      .map((doc) => loadYaml<KubeObject>(String(doc)))
      .map((object): KubeObject => (object.kind === 'Namespace' ? object : { ...object, metadata: { ...object.metadata, namespace: object.metadata.namespace ?? namespace } }));

  it('passes helm lint --strict, with default values and with every option on', async () => {
    for (const args of [[], EVERYTHING, BUNDLED]) {
      const { stdout } = await helm('lint', '--strict', CHART, '--kube-version', kubeVersion, ...KUBE_API, ...args);
      expect(stdout).to.include('0 chart(s) failed');
      expect(stdout).to.not.match(/\[(WARNING|ERROR)\]/);
    }
  });

  it('refuses to render without cluster access when it would have to generate a key or password, naming the value and the way out', async () => {
    const refusal = (...args: string[]) => renderOffline(...args).then(() => 'rendered', (error: Error) => error.message);
    expect(await refusal()).to.match(/secrets\.encryptionKey is empty and would be generated anew on every render: .*Set secrets\.existingSecret/);
    expect(await refusal('--set', 'secrets.encryptionKey=k')).to.match(/secrets\.jwtPrivateKey is empty/);
    expect(await refusal('--set', 'secrets.encryptionKey=k,secrets.jwtPrivateKey=j')).to.match(/secrets\.adminPassword is empty/);
    expect(await refusal('--set', 'secrets.existingSecret=didyma-keys', ...BUNDLED)).to.match(/(minio\.rootPassword|postgresql\.password|rabbitmq\.password) is empty/);
    // With cluster access (install, upgrade) it generates them, and an upgrade reads them back.
    const secret = (await render()).find((o) => o.kind === 'Secret' && o.metadata.name === 'dy-didyma') as any;
    expect(Object.keys(secret.data)).to.include.members(['encryption.key', 'jwt-private.pem', 'admin-password']);
    await api.apply({ ...secret, metadata: { name: secret.metadata.name, namespace } }, 'helm-test');
    const again = (await render()).find((o) => o.kind === 'Secret' && o.metadata.name === 'dy-didyma') as any;
    expect(again.data).to.deep.equal(secret.data);
  });

  it('renders without cluster access, the same every time, when secrets.existingSecret names the keys (GitOps)', async () => {
    const first = await renderOffline(...OFFLINE);
    expect(first.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name), 'no Secret of keys').to.deep.equal([]);
    const pods = first.filter((o) => ['Deployment', 'Job'].includes(o.kind)).map((o) => (o.spec as any).template.spec);
    const secretsNamed = new Set(
      pods.flatMap((pod) => [
        ...(pod.volumes ?? []).flatMap((v: any) => (v.secret ? [v.secret.secretName] : [])),
        ...[...(pod.initContainers ?? []), ...pod.containers].flatMap((c: any) => (c.env ?? []).flatMap((e: any) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []))),
      ]),
    );
    expect([...secretsNamed]).to.deep.equal(['didyma-keys']);
    expect(await renderOffline(...OFFLINE)).to.deep.equal(first);
    // Keys given one by one render too, and stay the same.
    const given = ['--set', 'secrets.encryptionKey=k,secrets.jwtPrivateKey=j,secrets.adminPassword=p', ...KUBE_API];
    expect(await renderOffline(...given)).to.deep.equal(await renderOffline(...given));
    expect(await renderOffline(...OFFLINE_BUNDLED)).to.deep.equal(await renderOffline(...OFFLINE_BUNDLED));
  });

  it('renders the CRDs of crds/ (kept on uninstall) so that upgrades update them, and refuses to take over CRDs it does not own', async () => {
    const crdsOf = async (...args: string[]) => (await renderOffline(...OFFLINE, ...args)).filter((o) => o.kind === 'CustomResourceDefinition') as any[];
    const crds = await crdsOf();
    expect(crds.map((crd) => crd.metadata.name)).to.deep.equal(['modeldeployments.didyma.io', 'storageconfigs.didyma.io']);
    for (const crd of crds) {
      const source = loadYaml<any>(fs.readFileSync(`crds/didyma.io_${crd.spec.names.plural}.yaml`, 'utf8'));
      expect(crd.spec, crd.metadata.name).to.deep.equal(source.spec);
      expect(crd.metadata.annotations).to.deep.equal({ 'helm.sh/resource-policy': 'keep' });
      expect(crd.metadata.labels).to.include({ 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/part-of': 'didyma' });
      await api.apply(crd, 'helm-dry-run', 'All');
    }
    expect((await crdsOf('--set', 'crds.keep=false')).map((crd) => crd.metadata.annotations)).to.deep.equal([undefined, undefined]);
    expect(await crdsOf('--set', 'crds.enabled=false')).to.deep.equal([]);
    // The test cluster's CRDs were applied by the tests, as chart 0.1.x's crds/ folder installed them: no release owns them.
    const adopt = await helm('template', 'dy', CHART, '--namespace', namespace, '--kubeconfig', kubeconfigPath(), '--dry-run=server', ...OFFLINE).then(
      () => 'rendered',
      (error: Error) => error.message,
    );
    expect(adopt).to.match(/CRD modeldeployments\.didyma\.io (exists but no Helm release owns it|belongs to release)/);
    expect(adopt).to.include(`kubectl annotate crd modeldeployments.didyma.io meta.helm.sh/release-name=dy meta.helm.sh/release-namespace=${namespace}`);
  });

  it("knows every value the README's Kubernetes section names, and renders with its helm install", async () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('## Run on Kubernetes'), readme.indexOf('## Documentation'));
    const sets = [...section.matchAll(/--set (\S+?)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(sets.map(([key]) => key)).to.include.members(['image.repository', 'externalDatabase.url', 'externalRabbitmq.url']);
    const tableKeys: string[] = [];
    for (const [, cell] of section.matchAll(/^\| (`.+?) \|/gm)) {
      let previous = '';
      for (const [, token] of cell!.matchAll(/`([^`]+)`/g)) {
        const key = token!.startsWith('.') ? previous.replace(/\.[^.]+$/, '') + token : token!;
        previous = key;
        const alternatives = key.match(/<([^>]+)>/)?.[1];
        const names = alternatives === 'name' ? ['auth', 'private', 'public'] : alternatives?.split(/\\?\|/);
        tableKeys.push(...(names ? names.map((name) => key.replace(/<[^>]+>/, name)) : [key]));
      }
    }
    const values = YAML.parse(fs.readFileSync(`${CHART}/values.yaml`, 'utf8'));
    const known = (key: string) => key.split('.').reduce<any>((node, part) => (node !== undefined && node !== null && part in node ? node[part] : undefined), values) !== undefined;
    for (const key of [...sets.map(([k]) => k), ...tableKeys]) expect(known(key), `${key} in values.yaml`).to.equal(true);
    const objects = await render(...sets.flatMap(([key, value]) => ['--set', `${key}=${value}`]));
    expect(objects.filter((o) => o.kind === 'Deployment')).to.have.length(5);
  });

  it('renders for GitOps (gitops.enabled) with no Helm hook: a migration Job per revision with a TTL and Argo CD annotations, no test pod, no uninstall Job', async () => {
    const GITOPS = [...OFFLINE, '--set', 'gitops.enabled=true'];
    const hooks = (objects: KubeObject[]) => objects.filter((o) => Object.keys(o.metadata.annotations ?? {}).some((key) => key.startsWith('helm.sh/hook'))).map((o) => `${o.kind}/${o.metadata.name}`);
    const jobs = (objects: KubeObject[]) => objects.filter((o) => o.kind === 'Job') as any[];
    const first = await renderOffline(...GITOPS);
    expect(hooks(first), 'objects with Helm hook annotations').to.deep.equal([]);
    expect(first.filter((o) => o.kind === 'Pod' || o.metadata.name.includes('release-finalizers')).map((o) => `${o.kind}/${o.metadata.name}`), 'the test pod and the uninstall cleanup').to.deep.equal([]);
    const [job, ...others] = jobs(first);
    expect(others, 'other Jobs').to.deep.equal([]);
    expect(job.metadata.name).to.match(/^dy-didyma-migrate-[0-9a-f]{8}$/);
    expect(job.spec.ttlSecondsAfterFinished).to.equal(86400);
    expect(job.metadata.annotations).to.deep.equal({ 'argocd.argoproj.io/hook': 'Sync', 'argocd.argoproj.io/sync-wave': '-1', 'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation' });
    // Keys given as values: their Secret comes before the Job (wave -2), and stays when the Application goes, as on helm uninstall.
    const given = await renderOffline(...KUBE_API, '--set', 'gitops.enabled=true', '--set', 'secrets.encryptionKey=k,secrets.jwtPrivateKey=j,secrets.adminPassword=p');
    expect(hooks(given), 'objects with Helm hook annotations').to.deep.equal([]);
    expect(given.find((o) => o.kind === 'Secret' && o.metadata.name === 'dy-didyma')?.metadata.annotations).to.deep.equal({
      'argocd.argoproj.io/sync-wave': '-2',
      'argocd.argoproj.io/sync-options': 'Delete=false,Prune=false',
      'helm.sh/resource-policy': 'keep',
    });
    // The same render keeps its name; a new image, or a change of the Job's pod, makes another Job.
    const nameOf = async (...args: string[]) => jobs(await renderOffline(...GITOPS, ...args))[0].metadata.name as string;
    expect(await nameOf()).to.equal(job.metadata.name);
    const bumped = await nameOf('--set', 'image.tag=0.1.1');
    expect(bumped).to.match(/^dy-didyma-migrate-[0-9a-f]{8}$/).and.not.equal(job.metadata.name);
    expect(await nameOf('--set', 'config.logLevel=debug')).to.not.be.oneOf([job.metadata.name, bumped]);
    // With the bundled PostgreSQL it runs once the sync is healthy; null keeps the finished Job until the next revision.
    const bundled = jobs(await renderOffline(...OFFLINE_BUNDLED, '--set', 'gitops.enabled=true', '--set', 'gitops.jobTtlSeconds=null'))[0];
    expect(bundled.metadata.annotations).to.deep.equal({ 'argocd.argoproj.io/hook': 'PostSync', 'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation' });
    expect(bundled.spec).to.not.have.property('ttlSecondsAfterFinished');
    // argoPostDelete brings the cleanup back as Argo CD's PostDelete hook: its ServiceAccount and Role first, then the Job.
    const cleanup = (await renderOffline(...GITOPS, '--set', 'gitops.argoPostDelete=true')).filter((o) => o.metadata.name === 'dy-didyma-release-finalizers');
    expect(cleanup.map((o) => `${o.kind} ${o.metadata.annotations?.['argocd.argoproj.io/hook']} ${o.metadata.annotations?.['argocd.argoproj.io/sync-wave']}`)).to.deep.equal([
      'ServiceAccount PostDelete -5',
      'Role PostDelete -5',
      'RoleBinding PostDelete -5',
      'Job PostDelete 0',
    ]);
    expect(hooks(cleanup)).to.deep.equal([]);
    expect((cleanup[3] as any).spec.ttlSecondsAfterFinished).to.equal(86400);
    // Under Helm nothing changes: the hooks, the fixed name, and a TTL on the cleanup that nothing else deletes.
    const helmRender = await renderOffline(...OFFLINE);
    expect(hooks(helmRender)).to.include.members(['Job/dy-didyma-migrate', 'Job/dy-didyma-release-finalizers', 'Pod/dy-didyma-test']);
    expect(hooks(await renderOffline(...KUBE_API, '--set', 'secrets.encryptionKey=k,secrets.jwtPrivateKey=j,secrets.adminPassword=p'))).to.include('Secret/dy-didyma');
    expect((helmRender.find((o) => `${o.kind}/${o.metadata.name}` === 'Job/dy-didyma-release-finalizers') as any).spec.ttlSecondsAfterFinished).to.equal(86400);
  });

  it('renders every part: three servers, executor, operator, ingresses, RBAC, PDBs, migration hook, CRDs', async () => {
    const kinds = (await renderOffline(...OFFLINE)).map((o) => `${o.kind}/${o.metadata.name}`);
    for (const expected of [
      'Deployment/dy-didyma-auth',
      'Deployment/dy-didyma-private',
      'Deployment/dy-didyma-public',
      'Deployment/dy-didyma-executor',
      'Deployment/dy-didyma-operator',
      'Ingress/dy-didyma-auth',
      'Ingress/dy-didyma-private',
      'Ingress/dy-didyma-public',
      'Role/dy-didyma-operator',
      'PodDisruptionBudget/dy-didyma-operator',
      'Job/dy-didyma-migrate',
      'CustomResourceDefinition/modeldeployments.didyma.io',
      'CustomResourceDefinition/storageconfigs.didyma.io',
    ]) {
      expect(kinds).to.include(expected);
    }
    const optional = (await render(...EVERYTHING)).map((o) => `${o.kind}/${o.metadata.name}`);
    expect(optional).to.include.members(['HorizontalPodAutoscaler/dy-didyma-public', 'HorizontalPodAutoscaler/dy-didyma-executor', 'ServiceMonitor/dy-didyma-operator']);
  });

  /** The pod template of a rendered Deployment or Job, with the object. */
  const podOf = (objects: KubeObject[], name: string) => {
    const object = objects.find((o) => `${o.kind}/${o.metadata.name}` === name) as any;
    expect(object, name).to.not.equal(undefined);
    const pod = object.spec.template.spec;
    return { object, pod, containers: [...(pod.initContainers ?? []), ...pod.containers] as any[] };
  };

  it("gives each component the pod settings of its own values: env (valueFrom too), volumes, mounts, annotations, priority, spread, image digest", async () => {
    const objects = await render(...POD_SETTINGS_ON);
    for (const [path, { object: name, spreads }] of Object.entries(POD_SETTINGS)) {
      const expected = podSettings(path, spreads) as any;
      const { object, pod, containers } = podOf(objects, name);
      expect(pod.priorityClassName, name).to.equal('didyma-critical');
      expect(pod.volumes, name).to.deep.include({ name: 'model-server-ca', configMap: { name: 'model-server-ca' } });
      // The chart-wide annotations, the component's winning on the same key.
      expect(object.spec.template.metadata.annotations, name).to.deep.include({ 'example.com/component': path, 'example.com/shared': 'component', 'example.com/chart': 'yes' });
      for (const container of containers) {
        const where = `${name}/${container.name}`;
        expect(container.image, where).to.equal(`ghcr.io/didyma/didyma@${DIGEST}`);
        expect(container.env, where).to.deep.include.members(expected.extraEnv);
        expect(container.env.find((e: any) => e.name === 'MODEL_SERVER_TOKEN').valueFrom, where).to.deep.equal({ secretKeyRef: { name: 'model-server', key: 'token' } });
        expect(container.volumeMounts, where).to.deep.include({ name: 'model-server-ca', mountPath: '/etc/didyma/ca', readOnly: true });
      }
      // A constraint without labelSelector spreads the component's own pods.
      const spread = spreads ? [{ ...expected.topologySpreadConstraints[0], labelSelector: { matchLabels: object.spec.selector.matchLabels } }] : undefined;
      expect(pod.topologySpreadConstraints, name).to.deep.equal(spread);
    }
  });

  it("spreads each Deployment's replicas across nodes and zones by default (ScheduleAnyway, its own pods), keeps a given labelSelector, and stops with []", async () => {
    const objects = await render();
    for (const { object: name, spreads } of Object.values(POD_SETTINGS)) {
      const { object, pod, containers } = podOf(objects, name);
      expect(pod.priorityClassName, name).to.equal(undefined);
      for (const container of containers) expect(container.image, name).to.equal('ghcr.io/didyma/didyma:0.1.0');
      if (!spreads) {
        expect(pod.topologySpreadConstraints, name).to.equal(undefined);
        continue;
      }
      const selector = { 'app.kubernetes.io/name': 'didyma', 'app.kubernetes.io/instance': 'dy', 'app.kubernetes.io/component': object.metadata.labels['app.kubernetes.io/component'] };
      expect(object.spec.selector.matchLabels, name).to.deep.equal(selector);
      // ScheduleAnyway: a one-node cluster, or one whose nodes have no zone label, still runs them all.
      const spread = (topologyKey: string) => ({ maxSkew: 1, topologyKey, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } });
      expect(pod.topologySpreadConstraints, name).to.deep.equal([spread('kubernetes.io/hostname'), spread('topology.kubernetes.io/zone')]);
    }
    const own = { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { tier: 'executors' } } };
    const changed = await render('--set-json', `executor.topologySpreadConstraints=${JSON.stringify([own])}`, '--set-json', 'operator.topologySpreadConstraints=[]');
    expect(podOf(changed, 'Deployment/dy-didyma-executor').pod.topologySpreadConstraints).to.deep.equal([own]);
    expect(podOf(changed, 'Deployment/dy-didyma-operator').pod.topologySpreadConstraints).to.equal(undefined);
  });

  it('autoscales the auth and private servers on CPU when asked, in place of their fixed replicas', async () => {
    expect((await render()).filter((o) => o.kind === 'HorizontalPodAutoscaler'), 'off by default').to.deep.equal([]);
    const objects = await render('--set', 'servers.auth.hpa.enabled=true', '--set', 'servers.private.hpa.enabled=true', '--set', 'servers.private.hpa.maxReplicas=4');
    const autoscalers = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler') as any[];
    expect(autoscalers.map((o) => o.metadata.name)).to.deep.equal(['dy-didyma-auth', 'dy-didyma-private']);
    expect(autoscalers[1].spec).to.deep.equal({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'dy-didyma-private' },
      minReplicas: 2,
      maxReplicas: 4,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
    });
    const replicas = (name: string) => (objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as any).spec.replicas;
    expect([replicas('dy-didyma-auth'), replicas('dy-didyma-private'), replicas('dy-didyma-public')]).to.deep.equal([undefined, undefined, 2]);
  });

  it('refuses, by its values schema, a wrong type, a misspelt key, a range that is not a CIDR and other malformed values', async () => {
    const refusal = (...args: string[]) => helm('template', 'dy', CHART, ...args).then(() => 'rendered', (error: Error) => error.message);
    expect(await refusal('--set', 'servers.auth.replicas=two')).to.match(/'\/servers\/auth\/replicas': got string, want integer/);
    expect(await refusal('--set', 'servers.auth.replica=3')).to.match(/'\/servers\/auth': additional properties 'replica' not allowed/);
    expect(await refusal('--set', 'executor.extraEnvs[0].name=A')).to.match(/'\/executor': additional properties 'extraEnvs' not allowed/);
    expect(await refusal('--set', 'podAnotations.a=b')).to.match(/additional properties 'podAnotations' not allowed/);
    expect(await refusal('--set', 'egress.allowCidrs={10.0.0.0/8,10.96.0.0}')).to.match(/'\/egress\/allowCidrs\/1'/);
    expect(await refusal('--set', 'egress.allowCidrs={10.0.0.0/33}')).to.match(/'\/egress\/allowCidrs\/0'/);
    expect(await refusal('--set', 'image.digest=latest')).to.match(/'\/image\/digest'/);
    expect(await refusal('--set-json', 'operator.extraEnv=[{"value":"x"}]')).to.match(/'\/operator\/extraEnv\/0': missing property 'name'/);
    expect(await refusal('--set-json', 'servers.public.topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"Sometimes"}]')).to.match(/whenUnsatisfiable/);
    expect(await refusal('--set', 'config.logLevel=loud')).to.match(/'\/config\/logLevel'/);
    expect(await refusal('--set-string', 'tracing.sampleRatio=1.5')).to.match(/'\/tracing\/sampleRatio'/);
    expect(await refusal('--set', 'servers.auth.resources.limits.memory=lots')).to.match(/'\/servers\/auth\/resources\/limits\/memory'/);
    // IPv6 ranges, an all-digit tag given with --set (a number) and an empty range list are all fine.
    expect(await refusal('--set', 'egress.allowCidrs={fd00::/8,10.0.0.0/8}', '--set', 'image.tag=20260101', '--set', 'secrets.existingSecret=keys', ...KUBE_API)).to.equal('rendered');
  });

  it('has a helm test pod of the platform image that logs in and reads lists through the Services, with no Kubernetes access', async () => {
    const pod = (await render()).find((o) => o.kind === 'Pod' && o.metadata.name === 'dy-didyma-test') as any;
    expect(pod.metadata.annotations).to.deep.equal({ 'helm.sh/hook': 'test', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    expect(pod.spec.automountServiceAccountToken).to.equal(false);
    const [container] = pod.spec.containers;
    expect(container.image).to.equal('ghcr.io/didyma/didyma:0.1.0');
    expect(container.command.slice(0, 3)).to.deep.equal(['node', '--input-type=module', '--eval']);
    expect(container.command[3]).to.equal(fs.readFileSync(`${CHART}/files/api-test.mjs`, 'utf8'));
    expect(container.env).to.deep.include.members([
      { name: 'AUTH_URL', value: 'http://dy-didyma-auth:8080' },
      { name: 'PRIVATE_URL', value: 'http://dy-didyma-private:8081' },
      { name: 'PUBLIC_URL', value: 'http://dy-didyma-public:8082' },
      { name: 'ADMIN_EMAIL', value: 'admin@didyma.local' },
      { name: 'ADMIN_PASSWORD', valueFrom: { secretKeyRef: { name: 'dy-didyma', key: 'admin-password' } } },
    ]);
    expect(container.securityContext).to.deep.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  });

  it('passes egress.allowCidrs, and nothing else (none by default), as the private networks the platform may call', async () => {
    const allowed = (objects: KubeObject[]) => {
      const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'dy-didyma-config') as unknown as { data: Record<string, string> };
      const operator = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'dy-didyma-operator') as any;
      const env = operator.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
      return [config.data.DIDYMA_EGRESS_ALLOW_CIDRS, env.find((e) => e.name === 'DIDYMA_EGRESS_ALLOW_CIDRS')?.value];
    };
    expect(allowed(await render()), 'none by default').to.deep.equal(['', '']);
    expect(allowed(await render('--set', 'egress.allowCidrs={10.42.0.0/16,10.43.0.0/16}'))).to.deep.equal(['10.42.0.0/16,10.43.0.0/16', '10.42.0.0/16,10.43.0.0/16']);
    expect(allowed(await render('--set', 'egress.allowCidrs=null'))).to.deep.equal(['', '']);
  });

  it('gives the API servers and the executors the node options of their values, and none when those are empty', async () => {
    const nodeOptions = (objects: KubeObject[], name: string) =>
      ((objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as any).spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>).find(
        (e) => e.name === 'NODE_OPTIONS',
      )?.value;
    const defaults = await render();
    for (const server of ['auth', 'private', 'public']) expect(nodeOptions(defaults, `dy-didyma-${server}`), server).to.equal('--max-old-space-size=128 --max-semi-space-size=8');
    expect(nodeOptions(defaults, 'dy-didyma-executor')).to.equal('--max-old-space-size=192 --max-semi-space-size=8');
    expect(nodeOptions(defaults, 'dy-didyma-operator')).to.equal('--max-old-space-size=192 --max-semi-space-size=8');
    const empty = await render('--set', 'serverNodeOptions=,executor.nodeOptions=,operator.nodeOptions=');
    expect(nodeOptions(empty, 'dy-didyma-public')).to.equal(undefined);
    expect(nodeOptions(empty, 'dy-didyma-executor')).to.equal(undefined);
    expect(nodeOptions(empty, 'dy-didyma-operator')).to.equal(undefined);
  });

  it("keeps an API server's pod serving for serverStopDelaySeconds before its SIGTERM, within its grace period, so a roll refuses no connection", async () => {
    const stop = (objects: KubeObject[], name: string) => {
      const pod = (objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as any).spec.template.spec;
      return { grace: pod.terminationGracePeriodSeconds, preStop: pod.containers[0].lifecycle?.preStop };
    };
    const defaults = await render();
    for (const server of ['auth', 'private', 'public']) expect(stop(defaults, `dy-didyma-${server}`), server).to.deep.equal({ grace: 35, preStop: { sleep: { seconds: 5 } } });
    expect(stop(await render('--set', 'serverStopDelaySeconds=0'), 'dy-didyma-public')).to.deep.equal({ grace: 30, preStop: undefined });
    expect(stop(await render('--set', 'serverStopDelaySeconds=20'), 'dy-didyma-public')).to.deep.equal({ grace: 50, preStop: { sleep: { seconds: 20 } } });
  });

  it('traces only with an endpoint, recording the share of the traces it starts that sampleRatio says, unless extraEnv names another sampler', async () => {
    const tracing = (objects: KubeObject[]) =>
      Object.fromEntries(Object.entries((objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'dy-didyma-config') as any).data as Record<string, string>).filter(([name]) => name.startsWith('OTEL_')));
    expect(tracing(await render())).to.deep.equal({});
    expect(tracing(await render('--set', 'tracing.otlpEndpoint=http://jaeger:4318'))).to.deep.equal({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    });
    expect(tracing(await render('--set', 'tracing.otlpEndpoint=http://jaeger:4318,tracing.sampleRatio=0.05')).OTEL_TRACES_SAMPLER_ARG).to.equal('0.05');
    const own = await render('--set', 'tracing.otlpEndpoint=http://jaeger:4318,config.extraEnv.OTEL_TRACES_SAMPLER=always_on');
    expect(tracing(own)).to.deep.equal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_TRACES_SAMPLER: 'always_on' });
  });

  it('gives the auth server alone the single sign-on connections, each client secret from its Secret, as settings its config accepts', async () => {
    const connections = [
      { id: 'corp', display_name: 'Corp', issuer: 'https://login.example.test/realms/corp', client_id: 'didyma', clientSecret: { secretName: 'corp-oidc', key: 'secret' }, workspace_roles: [{ group: 'team-a', workspace: 'team-a', role: 'supervisor' }], staff_groups: ['admins'] },
      { id: 'public-client', issuer: 'https://other.example.test', client_id: 'didyma-public' },
    ];
    const objects = await render('--set-json', `sso.connections=${JSON.stringify(connections)}`);
    const envOf = (name: string) => (objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name) as any).spec.template.spec.containers[0].env as Array<{ name: string; value?: string; valueFrom?: unknown }>;
    const auth = envOf('dy-didyma-auth');
    expect(auth.find((e) => e.name === 'DIDYMA_OIDC_CLIENT_SECRET_0')?.valueFrom).to.deep.equal({ secretKeyRef: { name: 'corp-oidc', key: 'secret' } });
    const value = auth.find((e) => e.name === 'DIDYMA_OIDC_CONNECTIONS')!.value!;
    expect(value).not.to.contain('corp-oidc');
    const [corp, open] = loadConfig({ DIDYMA_OIDC_CONNECTIONS: value, DIDYMA_OIDC_CLIENT_SECRET_0: 'from-the-secret' }).oidcConnections;
    expect(corp).to.deep.include({ id: 'corp', displayName: 'Corp', staffGroups: ['admins'], workspaceGrants: [{ group: 'team-a', workspace: 'team-a', role: 'supervisor' }] });
    expect(corp!.clientSecret!.reveal()).to.equal('from-the-secret');
    expect(open!.clientSecret).to.equal(undefined);
    for (const server of ['private', 'public']) expect(envOf(`dy-didyma-${server}`).map((e) => e.name), server).not.to.include('DIDYMA_OIDC_CONNECTIONS');
    const configMap = (rendered: KubeObject[]) => (rendered.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'dy-didyma-config') as any).data as Record<string, string>;
    expect(configMap(objects).DIDYMA_PASSWORD_SIGN_IN).to.equal('everyone');
    const staffOnly = configMap(await render('--set', 'sso.passwordSignIn=staff'));
    expect(loadConfig(staffOnly).passwordSignIn).to.equal('staff');
    // The values schema refuses what the config would refuse at start.
    const wrongRole = [{ ...connections[1], workspace_roles: [{ group: 'g', workspace: 'w', role: 'owner' }] }];
    expect(await render('--set-json', `sso.connections=${JSON.stringify(wrongRole)}`).then(() => 'rendered', (error: Error) => error.message)).to.match(/role/);
  });

  it('gives the auth server the workload mappings, and a ServiceAccount allowed TokenReviews only when ServiceAccounts are mapped', async () => {
    const issuers = [{ issuer: 'https://ci.example.test', audience: 'didyma', claim: 'repository', mappings: [{ value: 'org/app', workspace: 'team-a', role: 'supervisor' }] }];
    const accounts = [{ namespace: 'ci', service_account: 'runner', workspace: 'team-a' }];
    const objects = await render('--set-json', `workloadIdentity.issuers=${JSON.stringify(issuers)}`, '--set-json', `workloadIdentity.serviceAccounts=${JSON.stringify(accounts)}`);
    const authPod = (rendered: KubeObject[]) => (rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === 'dy-didyma-auth') as any).spec.template.spec;
    const env = Object.fromEntries((authPod(objects).containers[0].env as Array<{ name: string; value?: string }>).map((e) => [e.name, e.value ?? '']));
    const config = loadConfig(env);
    expect(config.workloadIssuers[0]).to.deep.include({ issuer: 'https://ci.example.test', claim: 'repository', grants: [{ value: 'org/app', workspace: 'team-a', role: 'supervisor' }] });
    expect(config.workloadServiceAccounts).to.deep.equal([{ namespace: 'ci', serviceAccount: 'runner', workspace: 'team-a', role: 'user' }]);
    expect(config).to.include({ workloadTokenReview: 'in-cluster', workloadAudience: 'didyma' });
    expect(authPod(objects).serviceAccountName).to.equal('dy-didyma-auth');
    const account = objects.find((o) => o.kind === 'ServiceAccount' && o.metadata.name === 'dy-didyma-auth') as any;
    expect(account.automountServiceAccountToken).to.equal(true);
    const role = objects.find((o) => o.kind === 'ClusterRole') as any;
    expect(role.rules).to.deep.equal([{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }]);
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding') as any;
    expect(binding.roleRef.name).to.equal(role.metadata.name);
    expect(binding.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'dy-didyma-auth', namespace }]);
    // Without ServiceAccounts mapped: no cluster-wide grant, and the auth server keeps its token-less account.
    const issuersOnly = await render('--set-json', `workloadIdentity.issuers=${JSON.stringify(issuers)}`);
    expect(issuersOnly.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).to.deep.equal([]);
    expect(authPod(issuersOnly).serviceAccountName).to.equal('dy-didyma-server');
    const wrongRole = [{ ...accounts[0], role: 'owner' }];
    expect(await render('--set-json', `workloadIdentity.serviceAccounts=${JSON.stringify(wrongRole)}`).then(() => 'rendered', (error: Error) => error.message)).to.match(/role/);
  });

  it("passes the operator's workers, probe interval and retry delay as settings its config accepts", async () => {
    const operator = (await render('--set', 'operator.workers=4,operator.probeSeconds=30,operator.retryMs=250')).find((o) => o.kind === 'Deployment' && o.metadata.name === 'dy-didyma-operator') as any;
    const env = Object.fromEntries((operator.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
    expect(env).to.include({ DIDYMA_OPERATOR_WORKERS: '4', DIDYMA_OPERATOR_PROBE_SECONDS: '30', DIDYMA_OPERATOR_RETRY_MS: '250' });
    expect(loadConfig(env)).to.include({ operatorWorkers: 4, operatorProbeSeconds: 30, operatorRetryMs: 250 });
    // The values schema refuses what the operator's config would refuse at start.
    expect(await render('--set', 'operator.workers=0').then(() => 'rendered', (error: Error) => error.message)).to.match(/'\/operator\/workers': minimum: got 0, want 1/);
    expect(() => loadConfig({ ...env, DIDYMA_OPERATOR_WORKERS: '0' })).to.throw(/DIDYMA_OPERATOR_WORKERS="0": expected an integer between 1 and 64/);
  });

  it('runs every container as non-root on a read-only root filesystem, with probes and resources', async () => {
    for (const object of (await render()).filter((o) => o.kind === 'Deployment')) {
      const pod = (object.spec as any).template.spec;
      expect(pod.securityContext.runAsNonRoot, object.metadata.name).to.equal(true);
      for (const container of pod.containers) {
        expect(container.securityContext).to.deep.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
        expect(Boolean(container.livenessProbe && container.readinessProbe && container.resources?.limits), `${object.metadata.name}/${container.name}`).to.equal(true);
      }
    }
  });

  it('runs its own PostgreSQL, RabbitMQ and MinIO when asked, and points the platform at them', async () => {
    const names = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);
    const dependencies = ['dy-didyma-postgresql', 'dy-didyma-rabbitmq', 'dy-didyma-minio'];
    const bundled = ['StatefulSet', 'Service', 'Secret'].flatMap((kind) => dependencies.map((name) => `${kind}/${name}`));
    expect(names(await render()).filter((name) => bundled.includes(name)), 'off by default').to.deep.equal([]);
    const objects = await render(...BUNDLED);
    expect(names(objects)).to.include.members(bundled);
    const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as any;

    // Every process reads the database and queue URLs from the bundled dependencies' Secrets; the chart's Secret holds neither.
    const containers = objects
      .filter((o) => ['Deployment', 'Job'].includes(o.kind))
      .flatMap((o) => [...((o.spec as any).template.spec.initContainers ?? []), ...(o.spec as any).template.spec.containers].map((c) => [`${o.metadata.name}/${c.name}`, c.env ?? []] as const))
      .filter(([, env]) => env.some((e: any) => e.name === 'DATABASE_URL'));
    expect(containers.map(([name]) => name)).to.include.members(['dy-didyma-auth/auth', 'dy-didyma-executor/executor', 'dy-didyma-migrate/migrate', 'dy-didyma-migrate/bootstrap']);
    for (const [name, env] of containers) {
      expect(env.find((e: any) => e.name === 'POSTGRESQL_PASSWORD')?.valueFrom, name).to.deep.equal({ secretKeyRef: { name: 'dy-didyma-postgresql', key: 'password' } });
      expect(env.find((e: any) => e.name === 'DATABASE_URL').value, name).to.equal('postgres://didyma:$(POSTGRESQL_PASSWORD)@dy-didyma-postgresql:5432/didyma');
      expect(env.find((e: any) => e.name === 'RABBITMQ_PASSWORD')?.valueFrom, name).to.deep.equal({ secretKeyRef: { name: 'dy-didyma-rabbitmq', key: 'password' } });
      expect(env.find((e: any) => e.name === 'DIDYMA_AMQP_URL').value, name).to.equal('amqp://didyma:$(RABBITMQ_PASSWORD)@dy-didyma-rabbitmq:5672');
    }
    expect(Object.keys(find('Secret', 'dy-didyma').data)).to.not.include.members(['database-url']);
    expect(Object.keys(find('Secret', 'dy-didyma').data)).to.not.include.members(['amqp-url']);
    // RabbitMQ creates its user from the configuration the Secret holds, on its first start.
    const broker = find('Secret', 'dy-didyma-rabbitmq').stringData;
    expect(broker.password).to.match(/^[A-Za-z0-9]{32}$/);
    expect(broker['didyma.conf']).to.include(`default_user = didyma\ndefault_pass = ${broker.password}\n`);
    expect(Buffer.from(find('Secret', 'dy-didyma-postgresql').data.password, 'base64').toString()).to.match(/^[A-Za-z0-9]{32}$/);
    // The database is a release resource, there only after the pre-install hooks: the migration runs after install.
    expect(find('Job', 'dy-didyma-migrate').metadata.annotations['helm.sh/hook']).to.equal('post-install,pre-upgrade');
    expect(find('ConfigMap', 'dy-didyma-config').data.DIDYMA_URL_ALLOW).to.equal('10.0.0.0/8,dy-didyma-minio');

    for (const name of dependencies) {
      const statefulSet = find('StatefulSet', name);
      const pod = statefulSet.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot, name).to.equal(true);
      expect(pod.enableServiceLinks, name).to.equal(false);
      const [container] = pod.containers;
      expect(container.securityContext).to.deep.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(Boolean(container.startupProbe && container.livenessProbe && container.readinessProbe && container.resources?.limits), name).to.equal(true);
      // Persistent by default, and the Secret the data was initialised with outlives the release like the volume.
      expect(statefulSet.spec.volumeClaimTemplates.map((claim: any) => claim.metadata.name), name).to.deep.equal(['data']);
      expect(find('Secret', name).metadata.annotations['helm.sh/resource-policy']).to.equal('keep');
    }
    expect(find('StatefulSet', 'dy-didyma-postgresql').spec.template.spec.containers[0].image).to.equal('postgres:17.6');

    const ephemeral = await render(...BUNDLED, ...['postgresql', 'rabbitmq', 'minio'].flatMap((name) => ['--set', `${name}.persistence.enabled=false`]));
    for (const name of dependencies) {
      const statefulSet = ephemeral.find((o) => o.kind === 'StatefulSet' && o.metadata.name === name) as any;
      expect(statefulSet.spec.volumeClaimTemplates, name).to.equal(undefined);
      expect(statefulSet.spec.template.spec.volumes.find((v: any) => v.name === 'data')).to.deep.equal({ name: 'data', emptyDir: {} });
      expect(ephemeral.find((o) => o.kind === 'Secret' && o.metadata.name === name)!.metadata.annotations).to.equal(undefined);
    }
    const refused = await render(...BUNDLED, '--set', 'postgresql.password=p@ss/word').then(
      () => 'rendered',
      (error: Error) => error.message,
    );
    expect(refused).to.match(/postgresql.password: use letters, digits/);
  });

  it('keeps Service environment variables out of every pod (a release named didyma would set DIDYMA_AUTH_PORT=tcp://…)', async () => {
    const pods = (await render('--set', 'executor.hpa.enabled=true')).filter((o) => ['Deployment', 'Job'].includes(o.kind)).map((o) => [o.metadata.name, (o.spec as any).template.spec] as const);
    expect(pods.length).to.be.at.least(7);
    for (const [name, pod] of pods) expect(pod.enableServiceLinks, name).to.equal(false);
  });

  for (const [label, args] of [
    ['default values', []],
    ['every option on', EVERYTHING],
    ['bundled PostgreSQL, RabbitMQ and MinIO', BUNDLED],
    ['GitOps mode with the uninstall cleanup', ['--set', 'gitops.enabled=true', '--set', 'gitops.argoPostDelete=true']],
  ] as const) {
    it(`renders manifests the API server accepts (server-side dry-run apply): ${label}`, async () => {
      const rejected: string[] = [];
      let accepted = 0;
      for (const object of await render(...args)) {
        try {
          await api.apply(object, 'helm-dry-run', 'All');
          accepted += 1;
        } catch (error) {
          rejected.push(`${object.kind}/${object.metadata.name}: ${(error as Error).message}`);
        }
      }
      expect(rejected, rejected.join('\n')).to.deep.equal([]);
      expect(accepted).to.be.greaterThan(25);
    });
  }

  it('renders, with metrics on, a ServiceMonitor per component that the ServiceMonitor schema takes whole (server-side dry-run)', async () => {
    expect((await render()).filter((o) => o.kind === 'ServiceMonitor'), 'none with metrics off').to.deep.equal([]);
    const objects = await render(...EVERYTHING);
    const monitors = objects.filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors.map((o) => o.metadata.name).sort()).to.deep.equal(['auth', 'executor', 'operator', 'private', 'public'].map((c) => `dy-didyma-${c}`));
    for (const monitor of monitors) {
      // Every component is scraped on its metrics port, the one the NetworkPolicy keeps to the metrics namespaces.
      const named = (kind: string) => objects.find((o) => o.kind === kind && o.metadata.name === monitor.metadata.name) as any;
      const container = named('Deployment').spec.template.spec.containers[0];
      const metricsPort = container.ports.find((p: any) => p.name === 'metrics')?.containerPort;
      expect((monitor as any).spec.endpoints[0].port, monitor.metadata.name).to.equal('metrics');
      expect(named('Service').spec.ports.find((p: any) => p.name === 'metrics')?.targetPort, monitor.metadata.name).to.equal('metrics');
      expect(metricsPort, monitor.metadata.name).to.be.a('number');
      const portVariable = container.env.find((e: any) => ['DIDYMA_METRICS_PORT', 'DIDYMA_EXECUTOR_PORT', 'DIDYMA_OPERATOR_PORT'].includes(e.name));
      expect(Number(portVariable?.value), monitor.metadata.name).to.equal(metricsPort);
      const answer = await api.apply(monitor, 'helm-dry-run', 'All');
      // The API server prunes what the schema does not name: a spec that comes back whole had no field Prometheus would ignore.
      expect((answer as any).spec, monitor.metadata.name).to.deep.equal((monitor as any).spec);
      expect((monitor as any).spec.endpoints[0].authorization).to.deep.equal({ type: 'Bearer', credentials: { name: 'dy-didyma', key: 'metrics-token' } });
    }
    // The schema is really checked: an interval Prometheus cannot read, or an unknown scheme, is refused.
    for (const endpoint of [{ interval: 'often' }, { scheme: 'ftp' }]) {
      const broken = { ...monitors[0]!, spec: { ...(monitors[0]!.spec as any), endpoints: [{ ...(monitors[0]!.spec as any).endpoints[0], ...endpoint }] } };
      const refused = await api.apply(broken, 'helm-dry-run', 'All').then(() => undefined, (error: unknown) => statusOf(error));
      expect(refused, JSON.stringify(endpoint)).to.equal(422);
    }
  });

  it('renders, with alerts on, a PrometheusRule that the PrometheusRule schema takes whole (server-side dry-run)', async () => {
    expect((await render()).filter((o) => o.kind === 'PrometheusRule'), 'none with alerts off').to.deep.equal([]);
    const rules = (await render(...EVERYTHING)).filter((o) => o.kind === 'PrometheusRule');
    expect(rules.map((o) => o.metadata.name)).to.deep.equal(['dy-didyma']);
    const answer = await api.apply(rules[0]!, 'helm-dry-run', 'All');
    // Pruned fields would come back missing: the rule Prometheus gets is the one promtool checked (test/integration/alerts.test.ts).
    expect((answer as any).spec).to.deep.equal((rules[0] as any).spec);
    // The schema is really checked: a duration Prometheus cannot read is refused.
    const spec = (rules[0] as any).spec;
    const broken = { ...rules[0]!, spec: { groups: [{ ...spec.groups[0], rules: [{ ...spec.groups[0].rules[0], for: 'a while' }] }] } };
    expect(await api.apply(broken, 'helm-dry-run', 'All').then(() => undefined, (error: unknown) => statusOf(error))).to.equal(422);
  });

  it('gives the signing key to the auth server alone: the other servers verify with its published keys, or with the public key when given', async () => {
    /** Per Deployment: the JWT key files it mounts from the release Secret, and its JWT settings. */
    const jwtOf = (objects: KubeObject[]) =>
      Object.fromEntries(
        objects
          .filter((o) => ['Deployment', 'Job'].includes(o.kind))
          .map((o) => {
            const pod = (o.spec as any).template.spec;
            const mounted = (pod.volumes ?? []).flatMap((v: any) => (v.secret ? (v.secret.items ?? [{ key: '(every key)' }]).map((i: any) => i.key) : [])).filter((key: string) => key.startsWith('jwt') || key === '(every key)');
            const env = Object.fromEntries([...(pod.initContainers ?? []), ...pod.containers].flatMap((c: any) => c.env ?? []).filter((e: any) => e.name.startsWith('DIDYMA_JWT')).map((e: any) => [e.name, e.value]));
            return [o.metadata.name, { mounted, env }];
          }),
      );
    const jwks = 'http://dy-didyma-auth:8080/api/auth/jwks.json';
    const rendered = jwtOf(await render());
    expect(rendered).to.deep.equal({
      'dy-didyma-auth': { mounted: ['jwt-private.pem'], env: { DIDYMA_JWT_PRIVATE_KEY_FILE: '/etc/didyma/keys/jwt-private.pem' } },
      'dy-didyma-private': { mounted: [], env: { DIDYMA_JWT_JWKS_URL: jwks } },
      'dy-didyma-public': { mounted: [], env: { DIDYMA_JWT_JWKS_URL: jwks } },
      'dy-didyma-executor': { mounted: [], env: {} },
      'dy-didyma-operator': { mounted: [], env: {} },
      'dy-didyma-migrate': { mounted: [], env: { DIDYMA_JWT_JWKS_URL: jwks } },
      'dy-didyma-release-finalizers': { mounted: [], env: {} },
    });
    expect(loadConfig({ DIDYMA_JWT_JWKS_URL: jwks })).to.include({ jwtJwksUrl: jwks, jwtJwksCooldownSeconds: 30 });
    const pinned = jwtOf(await render('--set', 'secrets.jwtPublicKey=-----BEGIN PUBLIC KEY-----'));
    for (const name of ['dy-didyma-private', 'dy-didyma-public']) {
      expect(pinned[name], name).to.deep.equal({ mounted: ['jwt-public.pem'], env: { DIDYMA_JWT_PUBLIC_KEY_FILE: '/etc/didyma/keys/jwt-public.pem' } });
    }
  });

  it('keeps tenant credentials in a namespace of their own, which the components that use them are told, and never the release namespace', async () => {
    const credentialsEnv = (objects: KubeObject[]) =>
      Object.fromEntries(
        objects
          .filter((o) => o.kind === 'Deployment')
          .map((o) => [o.metadata.name, (o.spec as any).template.spec.containers[0].env?.find((e: any) => e.name === 'DIDYMA_KUBE_CREDENTIALS_NAMESPACE')?.value]),
      );
    const objects = await render();
    expect(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)).to.deep.equal([credentialsNamespace]);
    expect(credentialsEnv(objects)).to.deep.equal({
      'dy-didyma-auth': undefined,
      'dy-didyma-private': credentialsNamespace,
      'dy-didyma-public': undefined,
      'dy-didyma-executor': credentialsNamespace,
      'dy-didyma-operator': credentialsNamespace,
    });
    // No component gets any Secret access in the release namespace.
    const releaseRules = objects.filter((o) => o.kind === 'Role' && o.metadata.namespace === namespace).flatMap((o) => (o as any).rules);
    expect(releaseRules.filter((rule: any) => rule.resources.includes('secrets'))).to.deep.equal([]);

    const own = await render('--set', 'credentials.namespace=tenant-keys', '--set', 'credentials.createNamespace=false');
    expect(own.filter((o) => o.kind === 'Namespace')).to.deep.equal([]);
    expect(new Set(Object.values(credentialsEnv(own)).filter(Boolean))).to.deep.equal(new Set(['tenant-keys']));
    expect(own.filter((o) => o.kind === 'RoleBinding' && o.metadata.namespace === 'tenant-keys')).to.have.length(3);
    const refused = await render('--set', `credentials.namespace=${namespace}`).then(
      () => 'rendered',
      (error: Error) => error.message,
    );
    expect(refused).to.include('credentials.namespace must differ from the release namespace');
    const malformed = await render('--set', 'credentials.namespace=Tenant_Keys').then(
      () => 'rendered',
      (error: Error) => error.message,
    );
    expect(malformed).to.match(/credentials\.namespace/);
  });

  it("gives each component the access it needs and no more (the chart's RBAC, by impersonating its ServiceAccounts)", async () => {
    const objects = await render();
    const rbacKinds = ['ServiceAccount', 'Role', 'RoleBinding', 'ConfigMap'];
    for (const object of objects.filter((o) => rbacKinds.includes(o.kind))) await api.apply(object, 'helm-test');
    // The release Secret, with the platform's keys: no component may read it.
    await api.apply(objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'dy-didyma')!, 'helm-test');
    expect(objects.filter((o) => o.kind === 'Role' && o.metadata.namespace === credentialsNamespace).map((o) => o.metadata.name).sort()).to.deep.equal(['dy-didyma-api', 'dy-didyma-executor', 'dy-didyma-operator']);
    const as = (component: string) => apiFor(kubeconfigAs(namespace, `dy-didyma-${component}`));
    const forbidden = (call: Promise<unknown>) => call.then(
      () => false,
      (error: unknown) => statusOf(error) === 403,
    );
    const noReleaseSecrets = async (component: string) => {
      const account = as(component);
      expect(await forbidden(account.core.readNamespacedSecret({ name: 'dy-didyma', namespace })), `${component} reads the release Secret`).to.equal(true);
      expect(await forbidden(account.core.listNamespacedSecret({ namespace })), `${component} lists the release namespace's Secrets`).to.equal(true);
    };

    // The API writes a deployment with its credentials, into the credentials namespace.
    const demo = await startDemoModelServer();
    const operator = await startTestOperator(namespace, {
      KUBECONFIG: kubeconfigAs(namespace, 'dy-didyma-operator'),
      DIDYMA_PROXY_CONFIGMAP: 'dy-didyma-proxy-config',
      DIDYMA_LEASE_NAME: 'dy-didyma-operator',
    });
    try {
      const asApi = as('api');
      const { metadata } = await new DesiredStateWriter({ namespace, credentialsNamespace, api: async () => asApi }, createLogger('silent')).apply({
        kind: 'deployment',
        workspace: 'default',
        key: 'rbac',
        registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: demo.url, tracking_server_url: demo.url } },
        serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: demo.url } },
        secrets: { server_proxy_pat: 'rbac-pat' },
        credentialsVersion: '0123456789abcdef0123456789abcdef',
      });
      const secret = secretName(metadata.name, '0123456789abcdef0123456789abcdef');
      // It creates tenants' credentials but can neither read them back, nor learn their names by listing, nor get them in the answer to a patch or a delete.
      expect(await forbidden(asApi.list('v1', 'Secret', credentialsNamespace, { labelSelector: 'app.kubernetes.io/managed-by=didyma' })), 'the API lists credentials').to.equal(true);
      expect(await forbidden(asApi.core.readNamespacedSecret({ name: secret, namespace: credentialsNamespace })), 'the API reads credentials back').to.equal(true);
      expect(await forbidden(asApi.mergePatch({ ...secretRef(credentialsNamespace, secret), metadata: { name: secret, namespace: credentialsNamespace, labels: { touched: 'yes' } } })), 'the API patches credentials').to.equal(true);
      expect(await forbidden(asApi.core.deleteNamespacedSecret({ name: secret, namespace: credentialsNamespace })), 'the API deletes credentials').to.equal(true);
      await noReleaseSecrets('api');

      // The operator, as its ServiceAccount, reconciles it to Ready (Lease, Secret watch and read, ConfigMap, status, Events).
      await waitFor('the operator to make it Ready', async () => {
        const resource = await api.objects.read<any>(resourceRef('deployment', namespace, metadata.name));
        return resource.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
      });
      const operatorApi = as('operator');
      await noReleaseSecrets('operator');
      expect(await forbidden(operatorApi.core.createNamespacedSecret({ namespace: credentialsNamespace, body: { metadata: { name: 'operator-write' } } })), 'the operator writes credentials').to.equal(true);
      expect(await forbidden(operatorApi.delete(resourceRef('deployment', namespace, metadata.name)))).to.equal(true);

      // Executors read the proxy ConfigMaps (watched by label) and the Secret they name, nothing else.
      const executor = as('executor');
      const entries = await executor.core.listNamespacedConfigMap({ namespace, labelSelector: proxyConfigSelector('dy-didyma-proxy-config') });
      expect(entries.items.map((item) => item.metadata?.name)).to.deep.equal([proxyConfigMapName('dy-didyma-proxy-config', 'default')]);
      expect(entries.items[0]!.data).to.have.property(configEntryKey('deployment', metadata.name));
      expect(await readSecret({ namespace, credentialsNamespace, api: async () => executor }, secret)).to.deep.equal({ server_proxy_pat: 'rbac-pat' });
      await noReleaseSecrets('executor');
      expect(await forbidden(executor.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'executor-write' } } }))).to.equal(true);
      expect(await forbidden(executor.core.listNamespacedSecret({ namespace: credentialsNamespace }))).to.equal(true);
      expect(await forbidden(executor.objects.read(resourceRef('deployment', namespace, metadata.name)))).to.equal(true);

      // The auth and public servers' account may do nothing at all.
      expect(await forbidden(as('server').core.readNamespacedConfigMap({ name: proxyConfigMapName('dy-didyma-proxy-config', 'default'), namespace }))).to.equal(true);
      expect(await forbidden(as('server').core.readNamespacedSecret({ name: secret, namespace: credentialsNamespace }))).to.equal(true);
    } finally {
      await operator.close();
      await demo.close();
    }
  });

  it('grants list and watch on InferenceServices in the namespaces of kserve.namespaces, and nothing else', async () => {
    await installKServeCrd();
    const [models, shared, other] = [testNamespaceName('dy-chart-models'), testNamespaceName('dy-chart-shared'), testNamespaceName('dy-chart-other')] as const;
    for (const name of [models, shared, other]) await api.core.createNamespace({ body: { metadata: { name, labels: { 'didyma.io/test': 'true' } } } });
    const objects = await render('--set-json', `kserve.namespaces=${JSON.stringify([{ namespace: models, workspaces: ['team-a', 'team-b'] }, { namespace: shared, workspaces: ['*'] }])}`);
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'dy-didyma-config') as KubeObject & { data: Record<string, string> };
    expect(config.data.DIDYMA_KSERVE_NAMESPACES).to.equal(`${models}=team-a|team-b,${shared}=*`);
    expect(loadConfig({ DIDYMA_KSERVE_NAMESPACES: config.data.DIDYMA_KSERVE_NAMESPACES }).kserveNamespaces.get(shared)).to.equal('*');
    // The operator reads no ConfigMap whole: it gets this one key, to check each deployment's namespaces as the API does.
    const operator = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'dy-didyma-operator') as any;
    expect(operator.spec.template.spec.containers[0].env).to.deep.include({ name: 'DIDYMA_KSERVE_NAMESPACES', valueFrom: { configMapKeyRef: { name: 'dy-didyma-config', key: 'DIDYMA_KSERVE_NAMESPACES' } } });
    const rbacKinds = ['ServiceAccount', 'Role', 'RoleBinding'];
    for (const object of objects.filter((o) => rbacKinds.includes(o.kind))) await api.apply(object, 'helm-test');

    /** Whether the component's ServiceAccount may list (or create) InferenceServices in `target`. */
    const allowed = (component: string, target: string, verb: 'list' | 'create' = 'list') => {
      const account = apiFor(kubeconfigAs(namespace, `dy-didyma-${component}`));
      const isvc = { apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'probe', namespace: target } };
      const call = verb === 'list' ? account.list('serving.kserve.io/v1beta1', 'InferenceService', target) : account.objects.create(isvc);
      return call.then(
        () => true,
        (error: unknown) => (statusOf(error) === 403 ? false : Promise.reject(error)),
      );
    };
    for (const component of ['api', 'executor', 'operator']) {
      expect(await allowed(component, models), `${component} lists ${models}`).to.equal(true);
      expect(await allowed(component, shared), `${component} lists ${shared}`).to.equal(true);
      expect(await allowed(component, other), `${component} lists ${other}`).to.equal(false);
      expect(await allowed(component, models, 'create'), `${component} creates in ${models}`).to.equal(false);
    }
    expect(await allowed('server', models)).to.equal(false);
  });

  describe('NetworkPolicies', () => {
    /** The rendered NetworkPolicies' specs by name, as plain YAML (the typed objects rename `from`). */
    const policies = async (...args: string[]) => {
      const { stdout } = await helm('template', 'dy', CHART, '--namespace', namespace, '--kubeconfig', kubeconfigPath(), '--dry-run=server', '--set', 'crds.enabled=false', ...KUBE_API, ...args);
      const objects = YAML.parseAllDocuments(stdout).map((doc) => doc.toJS()).filter((o) => o?.kind === 'NetworkPolicy');
      return new Map<string, any>(objects.map((o) => [o.metadata.name, o.spec]));
    };
    const platformPods = {
      matchLabels: { 'app.kubernetes.io/name': 'didyma', 'app.kubernetes.io/instance': 'dy' },
      matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'NotIn', values: ['postgresql', 'rabbitmq', 'minio'] }],
    };

    it('lets only the platform’s pods reach the bundled PostgreSQL, RabbitMQ and MinIO, which call nothing but DNS', async () => {
      const rendered = await policies(...BUNDLED);
      for (const [name, ports] of [['postgresql', ['postgresql']], ['rabbitmq', ['amqp']], ['minio', ['s3', 'console']]] as const) {
        const spec = rendered.get(`dy-didyma-${name}`);
        expect(spec.podSelector.matchLabels['app.kubernetes.io/component'], name).to.equal(name);
        expect(spec.policyTypes).to.deep.equal(['Ingress', 'Egress']);
        expect(spec.ingress).to.deep.equal([{ from: [{ podSelector: platformPods }], ports: ports.map((port) => ({ port, protocol: 'TCP' })) }]);
        expect(spec.egress.map((rule: any) => rule.ports.map((p: any) => p.port))).to.deep.equal([[53, 53]]);
      }
      expect([...(await policies()).keys()].filter((name) => /postgresql|rabbitmq|minio/.test(name)), 'none without the bundled dependencies').to.deep.equal([]);
    });

    it('opens the servers’ HTTP port to all and the metrics ports only to the named namespaces', async () => {
      const ingress = (await policies('--set', 'networkPolicy.ingress.metricsNamespaces={monitoring,observability}')).get('dy-didyma-ingress');
      expect(ingress.podSelector).to.deep.equal(platformPods);
      expect(ingress.policyTypes).to.deep.equal(['Ingress']);
      expect(ingress.ingress).to.deep.equal([
        { ports: [{ port: 'http', protocol: 'TCP' }] },
        { from: [{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['monitoring', 'observability'] }] } }], ports: [{ port: 'metrics', protocol: 'TCP' }] },
      ]);
      expect((await policies('--set', 'networkPolicy.ingress.metricsNamespaces=null')).get('dy-didyma-ingress').ingress, 'no namespace: nobody scrapes').to.deep.equal([{ ports: [{ port: 'http', protocol: 'TCP' }] }]);
    });

    it('lets the platform call only DNS, its own pods, egress.allowCidrs, the selected pods, the Kubernetes API and the extra rules', async () => {
      const models = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'models' } }, podSelector: { matchLabels: { app: 'model-server' } } };
      const rendered = await policies(
        '--set', 'egress.allowCidrs={10.42.0.0/16,10.43.0.0/16}',
        '--set', 'networkPolicy.egress.kubernetesApi.cidrs={192.0.2.10/32}',
        '--set-json', `networkPolicy.egress.peers=${JSON.stringify([models])}`,
        '--set-json', 'networkPolicy.egress.extraRules=[{"to":[{"ipBlock":{"cidr":"198.51.100.0/24"}}],"ports":[{"port":5432}]}]',
      );
      const egress = rendered.get('dy-didyma-egress');
      expect(egress.podSelector).to.deep.equal(platformPods);
      expect(egress.egress).to.deep.equal([
        { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
        { to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'didyma', 'app.kubernetes.io/instance': 'dy' } } }] },
        { to: [{ ipBlock: { cidr: '10.42.0.0/16' } }, { ipBlock: { cidr: '10.43.0.0/16' } }] },
        { to: [models] },
        { to: [{ ipBlock: { cidr: '198.51.100.0/24' } }], ports: [{ port: 5432 }] },
      ]);
      const api = rendered.get('dy-didyma-kube-api');
      expect(api.podSelector.matchExpressions).to.deep.equal([{ key: 'app.kubernetes.io/component', operator: 'In', values: ['private', 'executor', 'operator'] }]);
      expect(api.egress).to.deep.equal([{ ports: [{ port: 443, protocol: 'TCP' }, { port: 6443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '192.0.2.10/32' } }] }]);
      expect(await policies('--set', 'networkPolicy.egress.kubernetesApi.ports={6443}').then((r) => r.get('dy-didyma-kube-api').egress)).to.deep.equal([{ ports: [{ port: 6443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '192.0.2.10/32' } }] }]);
    });

    it('opens no rule to any address by default: every egress rule names its peers, none of them everything', async () => {
      const rendered = await policies(...BUNDLED);
      const rules = [...rendered.values()].flatMap((spec) => spec.egress ?? []);
      expect(rules).to.not.deep.equal([]);
      for (const rule of rules) {
        expect(rule.to?.length, JSON.stringify(rule)).to.be.greaterThan(0);
        for (const peer of rule.to) {
          expect(['0.0.0.0/0', '::/0'], JSON.stringify(peer)).to.not.include(peer.ipBlock?.cidr);
          expect(Object.keys(peer), 'an empty peer is every pod').to.not.deep.equal([]);
        }
      }
    });

    it('asks for the API server’s addresses when it renders without cluster access and cannot look them up', async () => {
      const offline = (...args: string[]) => helm('template', 'dy', CHART, '--namespace', namespace, '--set', 'secrets.existingSecret=didyma-keys', ...args).then(() => 'rendered', (error: Error) => error.message);
      expect(await offline()).to.match(/networkPolicy\.egress\.kubernetesApi\.cidrs is empty and the kubernetes Service's endpoints could not be looked up/);
      expect(await offline(...KUBE_API)).to.equal('rendered');
      expect(await offline('--set', 'networkPolicy.egress.enabled=false')).to.equal('rendered');
      expect(await offline('--set-json', 'networkPolicy.egress.peers=[{}]', ...KUBE_API)).to.match(/peers\/0/);
    });

    it('opens egress to the pods of the KServe namespaces by namespace, not by address', async () => {
      const egress = (await policies('--set-json', 'kserve.namespaces=[{"namespace":"models","workspaces":["team-a"]},{"namespace":"shared","workspaces":["*"]}]')).get('dy-didyma-egress');
      expect(egress.egress.at(-1)).to.deep.equal({
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'models' } } }, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'shared' } } }],
      });
      expect(JSON.stringify((await policies()).get('dy-didyma-egress').egress), 'no KServe namespace: no such rule').not.to.contain('metadata.name":"models');
    });

    it('switches each group off on its own', async () => {
      const names = async (...values: string[]) => [...(await policies(...BUNDLED, ...values.flatMap((value) => ['--set', value]))).keys()].sort();
      const all = ['egress', 'ingress', 'kube-api', 'minio', 'postgresql', 'rabbitmq'].map((name) => `dy-didyma-${name}`);
      expect(await names()).to.deep.equal(all);
      expect(await names('networkPolicy.bundled.enabled=false')).to.deep.equal(['dy-didyma-egress', 'dy-didyma-ingress', 'dy-didyma-kube-api']);
      expect(await names('networkPolicy.ingress.enabled=false')).to.deep.equal(all.filter((name) => name !== 'dy-didyma-ingress'));
      expect(await names('networkPolicy.egress.enabled=false')).to.deep.equal(['dy-didyma-ingress', 'dy-didyma-minio', 'dy-didyma-postgresql', 'dy-didyma-rabbitmq']);
      expect(await names('networkPolicy.bundled.enabled=false', 'networkPolicy.ingress.enabled=false', 'networkPolicy.egress.enabled=false')).to.deep.equal([]);
    });

    it('renders policies the API server accepts whole (server-side dry-run), extra rules and API addresses included', async () => {
      const objects = (await render(...BUNDLED, '--set-json', 'networkPolicy.egress.peers=[{"namespaceSelector":{"matchLabels":{"team":"models"}},"podSelector":{}}]', '--set-json', 'networkPolicy.egress.extraRules=[{"to":[{"ipBlock":{"cidr":"0.0.0.0/0","except":["10.0.0.0/8"]}}],"ports":[{"port":443,"protocol":"TCP"}]}]')).filter(
        (o) => o.kind === 'NetworkPolicy',
      );
      expect(objects).to.have.length(6);
      for (const policy of objects) {
        const answer = await api.apply(policy, 'helm-dry-run', 'All');
        expect((answer as any).spec, policy.metadata.name).to.deep.equal((policy as any).spec);
      }
    });
  });
});
