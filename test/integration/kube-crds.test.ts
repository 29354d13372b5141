import { expect } from 'chai';
import { KubeApiError, type KubeClient } from '../../core/kube/client.js';
import type { KubeConnection } from '../../core/kube/connection.js';
import { paths } from '../../core/kube/paths.js';
import { customResource } from '../../core/kube/resources.js';
import type { DesiredDeployment } from '../../core/kube/desired.js';
import { testNamespace } from '../support/kube.js';

const valid: DesiredDeployment = {
  kind: 'deployment',
  workspace: 'default',
  key: 'iris',
  registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: 'http://models.example:8080', tracking_server_url: 'http://models.example:8080' } },
  serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: 'http://models.example:8080' } },
  secrets: { server_proxy_pat: 'p' },
};

/** The server's rejection of a ModelDeployment with `spec` changed by `edit`. */
async function rejection(kube: KubeConnection, edit: (spec: Record<string, any>) => void): Promise<KubeApiError> {
  const object = customResource(valid, kube.namespace);
  object.metadata.name = `bad-${Math.random().toString(16).slice(2, 10)}`;
  edit(object.spec as Record<string, any>);
  const error = await kube.client.create(paths.resource('deployment', kube.namespace), object).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the API server accepted an invalid ModelDeployment').to.be.instanceOf(KubeApiError);
  return error as KubeApiError;
}

describe('Kubernetes: CRDs', function () {
  this.timeout(60_000);
  let client: KubeClient;
  let kube: KubeConnection;

  before(async () => {
    kube = await testNamespace('dy-crds');
    client = kube.client;
  });

  it('installs both CRDs with their short names, printer columns and status subresource', async () => {
    const resources = await client.get<{ resources: Array<{ name: string; kind: string; shortNames?: string[]; namespaced: boolean }> }>('/apis/didyma.io/v1alpha1');
    const byName = new Map(resources.resources.map((r) => [r.name, r]));
    expect(byName.get('modeldeployments')).to.deep.include({ kind: 'ModelDeployment', shortNames: ['mdep'], namespaced: true });
    expect(byName.get('storageconfigs')).to.deep.include({ kind: 'StorageConfig', shortNames: ['stcfg'], namespaced: true });
    expect(byName.has('modeldeployments/status') && byName.has('storageconfigs/status')).to.equal(true);
    const crd = await client.get<any>('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/modeldeployments.didyma.io');
    expect(crd.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name)).to.include.members(['Key', 'Workspace', 'Registry', 'Proxy', 'Ready', 'Age']);
  });

  it('accepts a valid ModelDeployment', async () => {
    const created = await client.create<any>(paths.resource('deployment', kube.namespace), customResource(valid, kube.namespace));
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
    const refusal = (init: Record<string, unknown>) => client.create(paths.resource('storage', kube.namespace), storage(init)).then(() => 'accepted', (e: unknown) => (e as Error).message);
    expect(await refusal({ secret_key: 'leaked' })).to.include('credentials belong in the Secret');
    expect(await refusal({ endpoint: 'minio.example:9000' })).to.include('endpoint must be an absolute http or https URL');
    expect(await refusal({ use_ssl: 'yes' })).to.include('spec.init.use_ssl');
    expect(await refusal({ use_ssl: true, region: 'eu-1' })).to.equal('accepted');
  });

  it('keeps the key and workspace of a resource immutable', async () => {
    const object = customResource({ ...valid, key: 'immutable' }, kube.namespace);
    await client.create(paths.resource('deployment', kube.namespace), object);
    const error = await client
      .patch(paths.resource('deployment', kube.namespace, object.metadata.name), 'merge', { spec: { deploymentKey: 'other' } })
      .catch((e: unknown) => e as KubeApiError);
    expect((error as KubeApiError).message).to.include('deploymentKey is immutable');
  });
});
