import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { loadYaml, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { KubeApi } from '../../infra/kube/api.js';
import { isNotFound } from '../../infra/kube/errors.js';
import { customResource, resourceRef, type KubeObject } from '../../infra/kube/resources.js';
import { CRD_FILES, helmPath, KUBE_API_VALUES, kubeconfigPath, testNamespace, waitFor } from '../support/kube.js';

const run = promisify(execFile);
/** The chart as released before its CRDs were templates: they sat in its crds/ folder, which Helm installs once and never upgrades. */
const PREVIOUS = 'test/fixtures/charts/didyma-0.1.0';
const CURRENT = 'charts/didyma';
const RELEASE = 'dy';
const CRDS = ['modeldeployments.didyma.io', 'storageconfigs.didyma.io'];
// The control plane runs no controllers, so hooks (the migration Job) would never finish.
// The test namespace comes with its credentials namespace (testNamespace), so the chart does not make it.
const VALUES = ['--no-hooks', '--set', 'secrets.adminPassword=upgrade-test', '--set', 'credentials.createNamespace=false', ...KUBE_API_VALUES];
const HELM_METADATA = /^(meta\.helm\.sh\/|helm\.sh\/|app\.kubernetes\.io\/(managed-by|instance|name|version)$)/;

type Crd = V1CustomResourceDefinition & KubeObject;
type Resource = KubeObject & { spec: unknown; status?: { conditions?: Array<{ type: string; status: string }> } };

const crdRef = (name: string): KubeObject => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });
const columns = (crd: Crd) => crd.spec.versions[0]!.additionalPrinterColumns!.map((column) => column.name);

async function helm(...args: string[]): Promise<string> {
  try {
    return (await run(helmPath(), ['--kubeconfig', kubeconfigPath(), ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`helm ${args.join(' ')} failed:\n${stderr}\n${stdout}`);
  }
}

/**
 * Chart 0.1.0 installed, resources made, then `helm upgrade` to the current
 * chart, whose CRDs are templates with a new printer column. The CRDs are
 * cluster-scoped and shared with the other kube tests: the test only ever
 * adds to them, and leaves them owned by no release, as it found them.
 */
describe('Kubernetes: upgrading the chart upgrades the CRDs', function () {
  this.timeout(180_000);
  let api: KubeApi;
  let namespace: string;

  const readCrd = (name: string) => api.objects.read<Crd>(crdRef(name));

  /** Takes Helm's ownership labels and annotations off the shared CRDs. */
  async function disown(): Promise<void> {
    for (const name of CRDS) {
      const { metadata } = await readCrd(name);
      const drop = (map: Record<string, string> | undefined) => Object.fromEntries(Object.keys(map ?? {}).filter((key) => HELM_METADATA.test(key)).map((key) => [key, null]));
      // A merge patch removes a key given as null.
      const patch = { ...crdRef(name), metadata: { name, labels: drop(metadata.labels), annotations: drop(metadata.annotations) } };
      await api.mergePatch(patch as unknown as KubeObject);
    }
  }

  before(async () => {
    const kube = await testNamespace('dy-crdup');
    ({ namespace } = kube);
    api = await kube.api();
    // The CRDs as chart 0.1.0 installed them (the tests' field manager applied today's; the older files replace them).
    await disown();
    for (const file of ['didyma.io_modeldeployments.yaml', 'didyma.io_storageconfigs.yaml']) {
      await api.apply(loadYaml<Crd>(fs.readFileSync(path.join(PREVIOUS, 'crds', file), 'utf8')), 'didyma-tests');
    }
  });

  after(async () => {
    if (!api) return;
    await helm('uninstall', RELEASE, '-n', namespace, '--no-hooks').catch(() => undefined);
    await disown();
    for (const file of CRD_FILES) await api.apply(loadYaml<Crd>(fs.readFileSync(file, 'utf8')), 'didyma-tests');
  });

  it('adds the new printer column, keeps every resource and its status, and leaves the CRDs in place on uninstall', async () => {
    await helm('install', RELEASE, PREVIOUS, '-n', namespace, ...VALUES);
    expect(columns(await readCrd(CRDS[0]!))).to.not.include('Reachable');

    const deployment = customResource(
      {
        kind: 'deployment',
        workspace: 'default',
        key: 'upgrade',
        registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: 'http://models.example:8080', tracking_server_url: 'http://models.example:8080' } },
        serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: 'http://models.example:8080' } },
        secrets: {},
      },
      namespace,
    );
    const storage = customResource({ kind: 'storage', workspace: 'default', key: 'cards', className: 'didyma.storage.S3Storage', init: { endpoint: 'http://minio.example:9000', bucket_name: 'cards' }, secrets: {} }, namespace);
    const status = { observedGeneration: 1, conditions: ['Ready', 'Reachable'].map((type) => ({ type, status: 'True', reason: 'Configured', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 })) };
    const before: Resource[] = [];
    for (const [kind, object] of [['deployment', deployment], ['storage', storage]] as const) {
      await api.objects.create(object);
      const plural = kind === 'deployment' ? 'modeldeployments' : 'storageconfigs';
      await api.patchStatus({ group: 'didyma.io', version: 'v1alpha1', plural, namespace, name: object.metadata.name }, status);
      before.push(await api.objects.read<Resource>(resourceRef(kind, namespace, object.metadata.name)));
    }

    // CRDs no release owns are not taken over silently: each refusal says how to adopt one, and the upgrade goes through once both are.
    const adopted: string[] = [];
    let upgraded = false;
    for (let attempt = 0; attempt <= CRDS.length; attempt += 1) {
      const refusal = await helm('upgrade', RELEASE, CURRENT, '-n', namespace, ...VALUES).then(
        () => undefined,
        (error: Error) => error.message.replace(/\s+/g, ' '),
      );
      if (refusal === undefined) {
        upgraded = true;
        break;
      }
      const command = /CRD (\S+) exists but no Helm release owns it .* kubectl label crd \1 (\S+)=(\S+) && kubectl annotate crd \1 (\S+)=(\S+) (\S+)=(\S+);/.exec(refusal);
      expect(command, refusal).to.not.equal(null);
      const [, name, label, value, ...annotations] = command!;
      adopted.push(name!);
      await api.mergePatch({ ...crdRef(name!), metadata: { name: name!, labels: { [label!]: value! }, annotations: { [annotations[0]!]: annotations[1]!, [annotations[2]!]: annotations[3]! } } });
    }
    expect(adopted).to.deep.equal(CRDS);
    expect(upgraded, 'upgraded once the CRDs are adopted').to.equal(true);

    for (const name of CRDS) {
      const crd = await waitFor(`${name} upgraded`, async () => {
        const current = await readCrd(name);
        return columns(current).includes('Reachable') ? current : undefined;
      });
      expect(crd.metadata.annotations).to.include({ 'helm.sh/resource-policy': 'keep', 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': namespace });
      expect(crd.spec.versions.map((version) => version.name)).to.deep.equal(['v1alpha1']);
    }
    const intact = async () => {
      for (const [index, kind] of (['deployment', 'storage'] as const).entries()) {
        const resource = await api.objects.read<Resource>(resourceRef(kind, namespace, before[index]!.metadata.name));
        expect(resource.metadata.uid).to.equal(before[index]!.metadata.uid);
        expect(resource.spec).to.deep.equal(before[index]!.spec);
        expect(resource.status).to.deep.equal(before[index]!.status);
      }
    };
    await intact();

    await helm('uninstall', RELEASE, '-n', namespace, '--no-hooks');
    for (const name of CRDS) {
      const gone = await readCrd(name).then(
        (crd) => Boolean(crd.metadata.deletionTimestamp),
        (error: unknown) => isNotFound(error),
      );
      expect(gone, `${name} kept on uninstall`).to.equal(false);
    }
    await intact();
  });
});
