import { expect } from 'chai';
import type { KubeApi } from '../../infra/kube/api.js';
import { statusOf } from '../../infra/kube/errors.js';
import type { KubeObject } from '../../infra/kube/resources.js';
import { CHART, containersOf, ofKind, podsOf, renderChart, renderRefusal, setValues } from '../support/chart.js';
import { runTool } from '../support/chart-alerts.js';
import { helmPath, KUBE_API_VALUES, testNamespace } from '../support/kube.js';

// The chart's values for running it at scale: a TLS Secret per host or
// cert-manager Certificates, Gateway API HTTPRoutes in place of Ingresses,
// one registry for every image, pod settings given once for every pod. The
// HTTPRoute and Certificate CRDs are the ones of test/fixtures/kube.

const BUNDLED = { 'postgresql.enabled': 'true', 'rabbitmq.enabled': 'true', 'minio.enabled': 'true', 'postgresql.password': 'pg', 'rabbitmq.password': 'mq', 'minio.rootPassword': 'minio-root' };
const CERT_MANAGER = { 'ingress.certManager.enabled': true, 'ingress.certManager.issuerRef.name': 'letsencrypt' };
const GATEWAY = [{ name: 'edge', namespace: 'gateways', sectionName: 'https' }];
const PLATFORM_PODS = ['Deployment/dy-didyma-auth', 'Deployment/dy-didyma-private', 'Deployment/dy-didyma-public', 'Deployment/dy-didyma-operator', 'Job/dy-didyma-migrate'];

describe('Kubernetes: the Helm chart at scale (TLS per host, cert-manager, Gateway API, image registry, global pod settings)', function () {
  this.timeout(180_000);
  let api: KubeApi;
  let namespace: string;

  before(async () => {
    const kube = await testNamespace('dy-scale');
    namespace = kube.namespace;
    api = await kube.api();
  });

  const render = (values: Record<string, unknown> = {}) => renderChart(namespace, values);
  const refusal = (values: Record<string, unknown>) => renderRefusal(namespace, values);
  /** What the API server makes of an object (server-side dry-run apply): its defaults added, fields its schema does not name pruned. */
  const dryRun = <T extends KubeObject>(object: T) => api.apply(object, 'helm-dry-run', 'All') as Promise<any>;
  const refusedWith = (object: KubeObject) => dryRun(object).then(() => undefined, (error: unknown) => statusOf(error));
  const byName = (objects: any[]) => Object.fromEntries(objects.map((o) => [o.metadata.name, o]));

  it('passes helm lint --strict with cert-manager, HTTPRoutes, a registry and global pod settings on', async () => {
    for (const values of [{ ...CERT_MANAGER, 'image.registry': 'mirror.example' }, { 'httpRoute.enabled': true, 'httpRoute.parentRefs': GATEWAY, 'global.extraEnv': [{ name: 'A', value: 'b' }] }]) {
      const output = await runTool(helmPath(), ['lint', '--strict', CHART, ...KUBE_API_VALUES, ...setValues({ 'secrets.existingSecret': 'didyma-keys', ...values })]);
      expect(output).to.include('0 chart(s) failed');
      expect(output).to.not.match(/\[(WARNING|ERROR)\]/);
    }
  });

  it('serves each host with its own TLS Secret, the shared one where it names none, and plain HTTP with neither', async () => {
    const tlsOf = (objects: KubeObject[]) => Object.fromEntries(ofKind(objects, 'Ingress').map((ingress) => [ingress.metadata.name, ingress.spec.tls]));
    expect(tlsOf(await render())).to.deep.equal({ 'dy-didyma-auth': undefined, 'dy-didyma-private': undefined, 'dy-didyma-public': undefined });
    const objects = await render({ 'ingress.tlsSecretName': 'didyma-tls', 'servers.public.ingress.tlsSecretName': 'api-tls' });
    expect(tlsOf(objects)).to.deep.equal({
      'dy-didyma-auth': [{ hosts: ['auth.didyma.example'], secretName: 'didyma-tls' }],
      'dy-didyma-private': [{ hosts: ['private.didyma.example'], secretName: 'didyma-tls' }],
      'dy-didyma-public': [{ hosts: ['api.didyma.example'], secretName: 'api-tls' }],
    });
    expect(tlsOf(await render({ 'servers.auth.ingress.tlsSecretName': 'auth-tls' }))['dy-didyma-private'], 'no shared Secret: HTTP').to.equal(undefined);
    for (const ingress of ofKind(objects, 'Ingress')) expect((await dryRun(ingress)).spec.tls, ingress.metadata.name).to.deep.equal(ingress.spec.tls);
    expect(ofKind(objects, 'Certificate'), 'no Certificate without cert-manager').to.deep.equal([]);
    expect(await refusal({ 'servers.auth.ingress.tlsSecretName': 'Auth_TLS' })).to.match(/'\/servers\/auth\/ingress\/tlsSecretName'/);
  });

  it('has cert-manager issue a Certificate per host, from the issuer of the values, into the Secret its Ingress serves', async () => {
    const objects = await render({ ...CERT_MANAGER, 'servers.public.ingress.tlsSecretName': 'api-tls', 'servers.private.ingress.enabled': false });
    const certificates = ofKind(objects, 'Certificate');
    const issuerRef = { name: 'letsencrypt', kind: 'ClusterIssuer', group: 'cert-manager.io' };
    expect(certificates.map((c) => [c.metadata.name, c.spec])).to.deep.equal([
      ['dy-didyma-auth', { secretName: 'dy-didyma-auth-tls', dnsNames: ['auth.didyma.example'], issuerRef }],
      ['dy-didyma-public', { secretName: 'api-tls', dnsNames: ['api.didyma.example'], issuerRef }],
    ]);
    const ingresses = byName(ofKind(objects, 'Ingress'));
    for (const certificate of certificates) {
      expect(ingresses[certificate.metadata.name].spec.tls, certificate.metadata.name).to.deep.equal([{ hosts: certificate.spec.dnsNames, secretName: certificate.spec.secretName }]);
      // A spec that comes back whole had no field cert-manager would not read.
      expect((await dryRun(certificate)).spec, certificate.metadata.name).to.deep.equal(certificate.spec);
    }
    // The schema is really checked: a usage cert-manager does not know is refused.
    expect(await refusedWith({ ...certificates[0], spec: { ...certificates[0].spec, usages: ['server auth', 'everything'] } })).to.equal(422);

    const namespaced = ofKind(await render({ ...CERT_MANAGER, 'ingress.certManager.issuerRef.kind': 'Issuer' }), 'Certificate');
    expect(namespaced.map((c) => c.spec.issuerRef)).to.deep.equal([0, 1, 2].map(() => ({ ...issuerRef, kind: 'Issuer' })));
    expect(await refusal({ ...CERT_MANAGER, 'ingress.tlsSecretName': 'didyma-tls' })).to.match(/ingress\.tlsSecretName names one Secret for every host/);
    expect(await refusal({ 'ingress.certManager.enabled': true })).to.match(/ingress\.certManager\.issuerRef\.name: the Issuer or ClusterIssuer/);
    expect(await refusal({ ...CERT_MANAGER, 'ingress.certManager.issuerRef.kind': 'Issuers' })).to.match(/'\/ingress\/certManager\/issuerRef\/kind'/);
  });

  it('routes each server host through the Gateways of httpRoute.parentRefs on the paths of its Ingress, in place of the Ingresses', async () => {
    const ingresses = byName(ofKind(await render(), 'Ingress'));
    const objects = await render({ ...CERT_MANAGER, 'httpRoute.enabled': true, 'httpRoute.parentRefs': GATEWAY, 'httpRoute.annotations': { 'example.com/team': 'platform' }, 'servers.private.ingress.enabled': false });
    expect(ofKind(objects, 'Ingress'), 'no Ingress').to.deep.equal([]);
    expect(ofKind(objects, 'Certificate'), 'TLS is the Gateway’s').to.deep.equal([]);
    const routes = ofKind(objects, 'HTTPRoute');
    expect(routes.map((route) => route.metadata.name)).to.deep.equal(['dy-didyma-auth', 'dy-didyma-public']);
    const services = byName(ofKind(objects, 'Service'));
    for (const route of routes) {
      const name = route.metadata.name;
      const [rule] = ingresses[name].spec.rules;
      const port = services[name].spec.ports.find((p: any) => p.name === 'http').port;
      expect(route.metadata.annotations, name).to.deep.equal({ 'example.com/team': 'platform' });
      expect(route.spec, name).to.deep.equal({
        parentRefs: GATEWAY,
        hostnames: [rule.host],
        rules: [
          {
            // /metrics stays out, as from the Ingress: the same paths, Prefix being PathPrefix.
            matches: rule.http.paths.map((p: any) => ({ path: { type: p.pathType === 'Prefix' ? 'PathPrefix' : p.pathType, value: p.path } })),
            backendRefs: [{ name, port }],
          },
        ],
      });
      // The API server takes it whole, adding its defaults only.
      const answer = await dryRun(route);
      expect(answer.spec, name).to.deep.equal({
        ...route.spec,
        parentRefs: GATEWAY.map((ref) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', ...ref })),
        rules: [{ ...route.spec.rules[0], backendRefs: [{ group: '', kind: 'Service', weight: 1, name, port }] }],
      });
    }
    // The schema is really checked: a backend Service without its port (a CEL rule), a relative path.
    const [route] = routes;
    const rule = route.spec.rules[0];
    expect(await refusedWith({ ...route, spec: { ...route.spec, rules: [{ ...rule, backendRefs: [{ name: 'dy-didyma-auth' }] }] } })).to.equal(422);
    expect(await refusedWith({ ...route, spec: { ...route.spec, rules: [{ ...rule, matches: [{ path: { type: 'PathPrefix', value: 'api' } }] }] } })).to.equal(422);

    expect(await refusal({ 'httpRoute.enabled': true })).to.match(/httpRoute\.parentRefs: name the Gateway/);
    expect(await refusal({ 'httpRoute.enabled': true, 'httpRoute.parentRefs': [{ namespace: 'gateways' }] })).to.match(/'\/httpRoute\/parentRefs\/0': missing property 'name'/);
  });

  it('pulls every image of the chart from image.registry, in place of the registry a repository names, Docker Hub names with their full path', async () => {
    const imagesOf = (objects: KubeObject[]) => [...podsOf(objects)].flatMap(([name, pod]) => containersOf(pod).map((c) => [`${name}/${c.name}`, c.image as string] as const));
    const mirrored: Record<string, string> = {
      'ghcr.io/didyma/didyma:0.1.0': 'mirror.example:5000/cache/didyma/didyma:0.1.0',
      'postgres:17.6': 'mirror.example:5000/cache/library/postgres:17.6',
      'rabbitmq:3.13': 'mirror.example:5000/cache/library/rabbitmq:3.13',
      'minio/minio:RELEASE.2025-04-22T22-12-26Z': 'mirror.example:5000/cache/minio/minio:RELEASE.2025-04-22T22-12-26Z',
    };
    const plain = imagesOf(await render(BUNDLED));
    // Every pod of the chart: the servers, executors, operator, both hooks' Jobs, the test pod and the three bundled services.
    expect(plain.length).to.be.at.least(12);
    expect([...new Set(plain.map(([, image]) => image))].sort()).to.deep.equal(Object.keys(mirrored).sort());
    const mirror = imagesOf(await render({ ...BUNDLED, 'image.registry': 'mirror.example:5000/cache' }));
    expect(mirror).to.deep.equal(plain.map(([name, image]) => [name, mirrored[image]]));

    const platformImages = async (values: Record<string, unknown>) => new Set(imagesOf(await render(values)).map(([, image]) => image));
    const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
    expect(await platformImages({ 'image.registry': 'mirror.example', 'image.digest': digest })).to.deep.equal(new Set([`mirror.example/didyma/didyma@${digest}`]));
    expect(await platformImages({ 'image.registry': 'mirror.example', 'image.repository': 'registry.internal:5000/team/didyma' })).to.deep.equal(new Set(['mirror.example/team/didyma:0.1.0']));
    expect(await platformImages({ 'image.registry': 'mirror.example', 'image.repository': 'localhost/didyma' })).to.deep.equal(new Set(['mirror.example/didyma:0.1.0']));
    expect(await refusal({ 'image.registry': 'https://mirror.example' })).to.match(/'\/image\/registry'/);
  });

  it('gives every platform pod the global env, volumes and mounts beside its own, which wins on a name, and leaves the bundled services alone', async () => {
    const ca = { name: 'NODE_EXTRA_CA_CERTS', value: '/etc/didyma/ca/ca.crt' };
    const proxy = { name: 'HTTPS_PROXY', value: 'http://proxy.example:3128' };
    const volume = { name: 'corp-ca', configMap: { name: 'corp-ca' } };
    const mount = { name: 'corp-ca', mountPath: '/etc/didyma/ca', readOnly: true };
    const own = {
      'executor.extraEnv': [{ name: 'HTTPS_PROXY', value: 'http://executor-proxy.example:3128' }],
      'executor.extraVolumes': [{ name: 'corp-ca', secret: { secretName: 'executor-ca' } }],
      'executor.extraVolumeMounts': [{ name: 'corp-ca', mountPath: '/etc/didyma/ca', subPath: 'executor' }],
    };
    const objects = await render({ ...BUNDLED, 'global.extraEnv': [ca, proxy], 'global.extraVolumes': [volume], 'global.extraVolumeMounts': [mount], ...own });
    const pods = podsOf(objects);
    for (const name of PLATFORM_PODS) {
      const pod = pods.get(name);
      expect(pod.volumes, name).to.deep.include(volume);
      for (const container of containersOf(pod)) {
        expect(container.env, `${name}/${container.name}`).to.deep.include.members([ca, proxy]);
        expect(container.volumeMounts, `${name}/${container.name}`).to.deep.include(mount);
      }
    }
    const executor = pods.get('Deployment/dy-didyma-executor');
    const [container] = executor.containers;
    expect(container.env.filter((e: any) => [ca.name, proxy.name].includes(e.name))).to.deep.equal([ca, ...own['executor.extraEnv']]);
    expect(executor.volumes.filter((v: any) => v.name === 'corp-ca')).to.deep.equal(own['executor.extraVolumes']);
    expect(container.volumeMounts.filter((m: any) => m.mountPath === '/etc/didyma/ca')).to.deep.equal(own['executor.extraVolumeMounts']);
    for (const name of ['dy-didyma-postgresql', 'dy-didyma-rabbitmq', 'dy-didyma-minio']) {
      const pod = pods.get(`StatefulSet/${name}`);
      expect(JSON.stringify(pod), name).to.not.match(/corp-ca|NODE_EXTRA_CA_CERTS/);
    }
    // No name twice in a list server-side apply keys by name (or mountPath): the API server takes every workload.
    for (const workload of objects.filter((o) => ['Deployment', 'Job'].includes(o.kind))) await dryRun(workload);
  });
});
