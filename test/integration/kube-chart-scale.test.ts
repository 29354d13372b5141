import { expect } from 'chai';
import type { KubeApi } from '../../infra/kube/api.js';
import type { KubeObject } from '../../infra/kube/resources.js';
import { containersOf, podsOf, renderChart, renderRefusal } from '../support/chart.js';
import { testNamespace } from '../support/kube.js';

// The chart's values for running it at scale: a TLS Secret per host or
// cert-manager Certificates, Gateway API HTTPRoutes in place of Ingresses,
// one registry for every image, pod settings given once for every pod. The
// HTTPRoute and Certificate CRDs are the ones of test/fixtures/kube.

const BUNDLED = { 'postgresql.enabled': 'true', 'rabbitmq.enabled': 'true', 'minio.enabled': 'true', 'postgresql.password': 'pg', 'rabbitmq.password': 'mq', 'minio.rootPassword': 'minio-root' };
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
