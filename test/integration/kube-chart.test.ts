import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { VersionApi, loadYaml } from '@kubernetes/client-node';
import YAML from 'yaml';
import type { KubeApi } from '../../infra/kube/api.js';
import { statusOf } from '../../infra/kube/errors.js';
import { resourceRef, type KubeObject } from '../../infra/kube/resources.js';
import { configEntryKey, secretName } from '../../infra/kube/names.js';
import { readSecret } from '../../infra/kube/secrets.js';
import { DesiredStateWriter } from '../../infra/kube/writer.js';
import { createLogger } from '../../infra/logging/logger.js';
import { startDemoModelServer } from '../support/fixtures.js';
import { apiFor, helmPath, kubeconfigAs, startTestOperator, testNamespace, waitFor } from '../support/kube.js';

const run = promisify(execFile);
const CHART = 'charts/didyma';

/** Values that switch every optional part on (TLS, HPAs, ServiceMonitors, metrics token, MinIO host in the allow list). */
const EVERYTHING = [
  'servers.public.hpa.enabled=true',
  'executor.hpa.enabled=true',
  'serviceMonitor.enabled=true',
  'secrets.metricsToken=scrape-me',
  'ingress.tlsSecretName=didyma-tls',
  'ingress.className=nginx',
  'externalMinio.endpoint=http://minio.storage:9000',
  'config.urlAllow=10.0.0.0/8',
].flatMap((value) => ['--set', value]);

/** The chart's own PostgreSQL, RabbitMQ and MinIO instead of external ones. */
const BUNDLED = ['postgresql.enabled=true', 'rabbitmq.enabled=true', 'minio.enabled=true', 'config.urlAllow=10.0.0.0/8'].flatMap((value) => ['--set', value]);

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
  let kubeVersion: string;

  before(async () => {
    const kube = await testNamespace('dy-chart');
    ({ namespace } = kube);
    api = await kube.api();
    kubeVersion = (await api.kc.makeApiClient(VersionApi).getCode()).gitVersion.replace(/[-+].*$/, '');
  });

  /** The chart's objects, typed through loadYaml (client-node serializes by its models' field names), in the test namespace. */
  const render = async (...args: string[]) => {
    const { stdout } = await helm('template', 'dy', CHART, '--namespace', namespace, '--kube-version', kubeVersion, '--include-crds', ...args);
    return YAML.parseAllDocuments(stdout)
      .filter((doc) => doc.contents)
      .map((doc) => loadYaml<KubeObject>(String(doc)))
      .map((object): KubeObject => ({ ...object, metadata: { ...object.metadata, namespace } }));
  };

  it('passes helm lint --strict, with default values and with every option on', async () => {
    for (const args of [[], EVERYTHING, BUNDLED]) {
      const { stdout } = await helm('lint', '--strict', CHART, '--kube-version', kubeVersion, ...args);
      expect(stdout).to.include('0 chart(s) failed');
      expect(stdout).to.not.match(/\[(WARNING|ERROR)\]/);
    }
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

  it('renders every part: three servers, executor, operator, ingresses, RBAC, PDBs, migration hook, CRDs', async () => {
    const kinds = (await render()).map((o) => `${o.kind}/${o.metadata.name}`);
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
      'ConfigMap/dy-didyma-proxy-config',
      'CustomResourceDefinition/modeldeployments.didyma.io',
      'CustomResourceDefinition/storageconfigs.didyma.io',
    ]) {
      expect(kinds).to.include(expected);
    }
    const optional = (await render(...EVERYTHING)).map((o) => `${o.kind}/${o.metadata.name}`);
    expect(optional).to.include.members(['HorizontalPodAutoscaler/dy-didyma-public', 'HorizontalPodAutoscaler/dy-didyma-executor', 'ServiceMonitor/dy-didyma-operator']);
  });

  it("passes the cluster's Pod and Service ranges, and nothing else, as the private networks the platform may call", async () => {
    const allowed = (objects: KubeObject[]) => {
      const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'dy-didyma-config') as unknown as { data: Record<string, string> };
      const operator = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'dy-didyma-operator') as any;
      const env = operator.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
      return [config.data.DIDYMA_EGRESS_ALLOW_CIDRS, env.find((e) => e.name === 'DIDYMA_EGRESS_ALLOW_CIDRS')?.value];
    };
    expect(allowed(await render())).to.deep.equal(['10.244.0.0/16,10.96.0.0/12', '10.244.0.0/16,10.96.0.0/12']);
    expect(allowed(await render('--set', 'egress.allowCidrs={10.42.0.0/16,10.43.0.0/16}'))).to.deep.equal(['10.42.0.0/16,10.43.0.0/16', '10.42.0.0/16,10.43.0.0/16']);
    expect(allowed(await render('--set', 'egress.allowCidrs=null'))).to.deep.equal(['', '']);
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
    const monitors = (await render(...EVERYTHING)).filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors.map((o) => o.metadata.name).sort()).to.deep.equal(['auth', 'executor', 'operator', 'private', 'public'].map((c) => `dy-didyma-${c}`));
    for (const monitor of monitors) {
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

  it("gives each component the access it needs and no more (the chart's RBAC, by impersonating its ServiceAccounts)", async () => {
    const rbacKinds = ['ServiceAccount', 'Role', 'RoleBinding', 'ConfigMap'];
    for (const object of (await render()).filter((o) => rbacKinds.includes(o.kind))) await api.apply(object, 'helm-test');
    const as = (component: string) => apiFor(kubeconfigAs(namespace, `dy-didyma-${component}`));
    const forbidden = (call: Promise<unknown>) => call.then(
      () => false,
      (error: unknown) => statusOf(error) === 403,
    );

    // The API writes a deployment with its credentials.
    const demo = await startDemoModelServer();
    const operator = await startTestOperator(namespace, {
      KUBECONFIG: kubeconfigAs(namespace, 'dy-didyma-operator'),
      DIDYMA_PROXY_CONFIGMAP: 'dy-didyma-proxy-config',
      DIDYMA_LEASE_NAME: 'dy-didyma-operator',
    });
    try {
      const asApi = as('api');
      const { metadata } = await new DesiredStateWriter({ namespace, api: async () => asApi }, createLogger('silent')).apply({
        kind: 'deployment',
        workspace: 'default',
        key: 'rbac',
        registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: demo.url, tracking_server_url: demo.url } },
        serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: demo.url } },
        secrets: { server_proxy_pat: 'rbac-pat' },
      });
      await asApi.list('v1', 'Secret', namespace, { labelSelector: 'app.kubernetes.io/managed-by=didyma' });

      // The operator, as its ServiceAccount, reconciles it to Ready (Lease, Secret, ConfigMap, status, Events).
      await waitFor('the operator to make it Ready', async () => {
        const resource = await api.objects.read<any>(resourceRef('deployment', namespace, metadata.name));
        return resource.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
      });
      const operatorApi = as('operator');
      expect(await forbidden(operatorApi.core.listNamespacedSecret({ namespace }))).to.equal(true);
      expect(await forbidden(operatorApi.delete(resourceRef('deployment', namespace, metadata.name)))).to.equal(true);

      // Executors read the proxy ConfigMap (watched by name) and the Secret it names, nothing else.
      const executor = as('executor');
      const entries = await executor.core.listNamespacedConfigMap({ namespace, fieldSelector: 'metadata.name=dy-didyma-proxy-config' });
      expect(entries.items[0]!.data).to.have.property(configEntryKey('deployment', metadata.name));
      expect(await readSecret({ namespace, api: async () => executor }, secretName(metadata.name))).to.deep.equal({ server_proxy_pat: 'rbac-pat' });
      expect(await forbidden(executor.core.listNamespacedConfigMap({ namespace }))).to.equal(true);
      expect(await forbidden(executor.core.listNamespacedSecret({ namespace }))).to.equal(true);
      expect(await forbidden(executor.objects.read(resourceRef('deployment', namespace, metadata.name)))).to.equal(true);

      // The auth and public servers' account may do nothing at all.
      expect(await forbidden(as('server').core.readNamespacedConfigMap({ name: 'dy-didyma-proxy-config', namespace }))).to.equal(true);
    } finally {
      await operator.close();
      await demo.close();
    }
  });

  describe('NetworkPolicies', () => {
    /** The rendered NetworkPolicies' specs by name, as plain YAML (the typed objects rename `from`). */
    const policies = async (...args: string[]) => {
      const { stdout } = await helm('template', 'dy', CHART, '--namespace', namespace, '--kube-version', kubeVersion, ...args);
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

    it('lets the platform call only DNS, its own pods, egress.allowCidrs, the Kubernetes API and the extra rules', async () => {
      const rendered = await policies(
        '--set', 'egress.allowCidrs={10.42.0.0/16,10.43.0.0/16}',
        '--set', 'networkPolicy.egress.kubernetesApi.cidrs={192.0.2.10/32}',
        '--set-json', 'networkPolicy.egress.extraRules=[{"to":[{"ipBlock":{"cidr":"198.51.100.0/24"}}],"ports":[{"port":5432}]}]',
      );
      const egress = rendered.get('dy-didyma-egress');
      expect(egress.podSelector).to.deep.equal(platformPods);
      expect(egress.egress).to.deep.equal([
        { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
        { to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'didyma', 'app.kubernetes.io/instance': 'dy' } } }] },
        { to: [{ ipBlock: { cidr: '10.42.0.0/16' } }, { ipBlock: { cidr: '10.43.0.0/16' } }] },
        { to: [{ ipBlock: { cidr: '198.51.100.0/24' } }], ports: [{ port: 5432 }] },
      ]);
      const api = rendered.get('dy-didyma-kube-api');
      expect(api.podSelector.matchExpressions).to.deep.equal([{ key: 'app.kubernetes.io/component', operator: 'In', values: ['private', 'executor', 'operator'] }]);
      expect(api.egress).to.deep.equal([{ ports: [{ port: 443, protocol: 'TCP' }, { port: 6443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '192.0.2.10/32' } }] }]);
      expect((await policies()).get('dy-didyma-kube-api').egress, 'no API address given: its ports anywhere').to.deep.equal([{ ports: [{ port: 443, protocol: 'TCP' }, { port: 6443, protocol: 'TCP' }] }]);
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
      const objects = (await render(...BUNDLED, '--set', 'networkPolicy.egress.kubernetesApi.cidrs={192.0.2.10/32}', '--set-json', 'networkPolicy.egress.extraRules=[{"to":[{"ipBlock":{"cidr":"0.0.0.0/0","except":["10.0.0.0/8"]}}],"ports":[{"port":443,"protocol":"TCP"}]}]')).filter(
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
