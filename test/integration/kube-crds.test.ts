import { expect } from 'chai';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { KubeApi } from '../../infra/kube/api.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import { statusOf } from '../../infra/kube/errors.js';
import { customResource, resourceRef } from '../../infra/kube/resources.js';
import type { DesiredDeployment } from '../../infra/kube/desired.js';
import { testNamespace } from '../support/kube.js';

const valid: DesiredDeployment = {
  kind: 'deployment',
  workspace: 'default',
  key: 'iris',
  registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: 'http://models.example:8080', tracking_server_url: 'http://models.example:8080' } },
  serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: 'http://models.example:8080' } },
  secrets: { server_proxy_pat: 'p' },
  credentialsVersion: '0123456789abcdef0123456789abcdef',
};

/** The server's rejection of a ModelDeployment with `spec` changed by `edit`: its status and message. */
async function rejection(kube: KubeConnection, edit: (spec: Record<string, any>) => void): Promise<{ status?: number; message: string }> {
  const object = customResource(valid, kube.namespace);
  object.metadata.name = `bad-${Math.random().toString(16).slice(2, 10)}`;
  edit(object.spec as Record<string, any>);
  const error = await (await kube.api()).objects.create(object).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(statusOf(error), 'the API server accepted an invalid ModelDeployment').to.be.a('number');
  return { status: statusOf(error), message: error!.message };
}

describe('Kubernetes: CRDs', function () {
  this.timeout(60_000);
  let api: KubeApi;
  let kube: KubeConnection;

  before(async () => {
    kube = await testNamespace('dy-crds');
    api = await kube.api();
  });

  it('installs both CRDs with their short names, printer columns and status subresource', async () => {
    const resources = await api.custom.getAPIResources({ group: 'didyma.io', version: 'v1alpha1' });
    const byName = new Map(resources.resources.map((r) => [r.name, r]));
    expect(byName.get('modeldeployments')).to.deep.include({ kind: 'ModelDeployment', shortNames: ['mdep'], namespaced: true });
    expect(byName.get('storageconfigs')).to.deep.include({ kind: 'StorageConfig', shortNames: ['stcfg'], namespaced: true });
    expect(byName.has('modeldeployments/status') && byName.has('storageconfigs/status')).to.equal(true);
    const crd = await api.objects.read<V1CustomResourceDefinition>({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'modeldeployments.didyma.io' } });
    expect(crd.spec.versions[0]!.additionalPrinterColumns!.map((c) => c.name)).to.include.members(['Key', 'Workspace', 'Registry', 'Proxy', 'Ready', 'Age']);
  });

  it('accepts a valid ModelDeployment', async () => {
    const created = await api.objects.create<any>(customResource(valid, kube.namespace));
    expect(created.spec.deploymentKey).to.equal('iris');
  });

  it('rejects a key outside the API pattern', async () => {
    const error = await rejection(kube, (spec) => (spec.deploymentKey = '-no spaces-'));
    expect(error.status).to.equal(422);
    expect(error.message).to.include('spec.deploymentKey');
  });

  it('rejects a credential in the spec', async () => {
    const error = await rejection(kube, (spec) => (spec.serverProxy.init.server_proxy_pat = 'leaked'));
    expect(error.status).to.equal(422);
    expect(error.message).to.include('credentials belong in the Secret');
  });

  it('rejects a URL that is not an absolute http(s) URL', async () => {
    const error = await rejection(kube, (spec) => (spec.registry.init.model_registry_url = 'ftp://models.example'));
    expect(error.message).to.include('absolute http or https URL');
  });

  it('rejects a class name that is not fully qualified, and a missing proxy', async () => {
    expect((await rejection(kube, (spec) => (spec.registry.className = 'Registry'))).message).to.include('spec.registry.className');
    expect((await rejection(kube, (spec) => delete spec.serverProxy)).message).to.include('spec.serverProxy');
  });

  it('rejects a StorageConfig with a credential, a non-URL endpoint or a mistyped init value', async () => {
    const storage = (init: Record<string, unknown>) => ({
      apiVersion: 'didyma.io/v1alpha1',
      kind: 'StorageConfig',
      metadata: { name: `bad-storage-${Math.random().toString(16).slice(2, 8)}`, namespace: kube.namespace },
      spec: { workspace: 'default', storageKey: 'files', className: 'didyma.storage.S3Storage', init: { endpoint: 'http://minio.example:9000', bucket_name: 'cards', ...init } },
    });
    const refusal = (init: Record<string, unknown>) => api.objects.create(storage(init)).then(() => 'accepted', (e: unknown) => (e as Error).message);
    expect(await refusal({ secret_key: 'leaked' })).to.include('credentials belong in the Secret');
    expect(await refusal({ endpoint: 'minio.example:9000' })).to.include('endpoint must be an absolute http or https URL');
    expect(await refusal({ use_ssl: 'yes' })).to.include('spec.init.use_ssl');
    expect(await refusal({ use_ssl: true, region: 'eu-1' })).to.equal('accepted');
  });

  it('keeps the key and workspace of a resource immutable', async () => {
    const object = customResource({ ...valid, key: 'immutable' }, kube.namespace);
    await api.objects.create(object);
    const error = await api.mergePatch({ ...resourceRef('deployment', kube.namespace, object.metadata.name), spec: { deploymentKey: 'other' } }).catch((e: unknown) => e as Error);
    expect((error as Error).message).to.include('deploymentKey is immutable');
  });
});
