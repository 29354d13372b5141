import fs from 'node:fs';
import { expect } from 'chai';
import YAML from 'yaml';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { DesiredDeployment, DesiredStorage } from './desired.js';
import { ANNOTATIONS, API_VERSION, KINDS, LABELS } from './constants.js';
import { credentialsSecret, customResource } from './resources.js';

const deployment: DesiredDeployment = {
  kind: 'deployment',
  workspace: 'default',
  key: 'iris',
  registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: 'http://models.example:8080', tracking_server_url: 'http://models.example:8080' } },
  serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: 'http://models.example:8080' } },
  secrets: { server_proxy_pat: 'pat-of-the-proxy' },
  credentialsVersion: '0123456789abcdef0123456789abcdef',
};

const storage: DesiredStorage = {
  kind: 'storage',
  workspace: 'team_a',
  key: 'files',
  className: 'didyma.storage.S3Storage',
  init: { endpoint: 'http://minio.example:9000', bucket_name: 'cards', access_key: 'didyma', use_ssl: false },
  secrets: { secret_key: 'very-secret' },
  credentialsVersion: 'fedcba9876543210fedcba9876543210',
};

const crd = (file: string) => YAML.parse(fs.readFileSync(new URL(`../../crds/${file}`, import.meta.url), 'utf8'));

/** The CRD's structural schema as JSON Schema (x-kubernetes-* keywords and CEL rules are the API server's). */
function schemaOf(file: string) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  // Kubernetes' own integer format: the API server checks the range.
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  return ajv.compile(crd(file).spec.versions[0].schema.openAPIV3Schema);
}

describe('custom resources', () => {
  it('renders a ModelDeployment: classes, init, secretRef, workspace label; no credential', () => {
    const object = customResource(deployment, 'didyma');
    expect(object).to.deep.include({ apiVersion: API_VERSION, kind: 'ModelDeployment' });
    expect(object.metadata.namespace).to.equal('didyma');
    expect(object.metadata.labels).to.include({ [LABELS.workspace]: 'default', [LABELS.managedBy]: 'didyma' });
    expect(object.metadata.annotations).to.include({ [ANNOTATIONS.workspace]: 'default', [ANNOTATIONS.key]: 'iris' });
    expect(object.spec).to.deep.equal({
      workspace: 'default',
      deploymentKey: 'iris',
      registry: deployment.registry,
      serverProxy: deployment.serverProxy,
      secretRef: { name: `${object.metadata.name}-credentials-0123456789abcdef0123456789abcdef` },
    });
    expect(JSON.stringify(object)).to.not.include('pat-of-the-proxy');
  });

  it('puts the credentials in the Secret the resource names: one immutable Secret per version, labelled with its resource', () => {
    const object = customResource(deployment, 'didyma');
    const secret = credentialsSecret(deployment, 'didyma')!;
    expect(secret.metadata.name).to.equal((object.spec as { secretRef: { name: string } }).secretRef.name);
    expect(secret.metadata.labels).to.include({ [LABELS.kind]: 'deployment', [LABELS.resource]: object.metadata.name });
    expect(secret.immutable).to.equal(true);
    expect(Buffer.from((secret.data as Record<string, string>).server_proxy_pat!, 'base64').toString()).to.equal('pat-of-the-proxy');
    const rotated = { ...deployment, secrets: { server_proxy_pat: 'a-new-pat' }, credentialsVersion: 'aaaabbbbccccddddeeeeffff00001111' };
    expect(credentialsSecret(rotated, 'didyma')!.metadata.name, 'a new version, a new Secret').to.not.equal(secret.metadata.name);
    expect((customResource(rotated, 'didyma').spec as { secretRef: { name: string } }).secretRef.name).to.equal(credentialsSecret(rotated, 'didyma')!.metadata.name);
    expect(() => customResource({ ...deployment, credentialsVersion: undefined }, 'didyma'), 'credentials without a version').to.throw(/no version/);
  });

  it('renders no Secret and no secretRef without credentials', () => {
    const plain = { ...deployment, secrets: {} };
    expect(credentialsSecret(plain, 'didyma')).to.equal(null);
    expect(customResource(plain, 'didyma').spec).to.not.have.property('secretRef');
  });

  it('renders a StorageConfig with boolean init values and without the secret key', () => {
    const object = customResource(storage, 'didyma');
    expect(object.kind).to.equal('StorageConfig');
    expect(object.spec).to.deep.include({ storageKey: 'files', className: 'didyma.storage.S3Storage', init: storage.init });
    expect(JSON.stringify(object)).to.not.include('very-secret');
  });

  it('renders objects the CRD schemas accept', () => {
    expect(schemaOf('didyma.io_modeldeployments.yaml')(customResource(deployment, 'didyma'))).to.equal(true);
    const validateStorage = schemaOf('didyma.io_storageconfigs.yaml');
    expect(validateStorage(customResource(storage, 'didyma')), JSON.stringify(validateStorage.errors)).to.equal(true);
  });

  it('matches the CRDs (group, kinds, plurals, short names) and the chart carries the same files', () => {
    for (const [file, info] of [
      ['didyma.io_modeldeployments.yaml', KINDS.deployment],
      ['didyma.io_storageconfigs.yaml', KINDS.storage],
    ] as const) {
      const definition = crd(file);
      expect(`${definition.spec.group}/${definition.spec.versions[0].name}`).to.equal(API_VERSION);
      expect(definition.spec.names).to.deep.include({ kind: info.kind, plural: info.plural, shortNames: [info.short] });
      const chartCopy = fs.readFileSync(new URL(`../../charts/didyma/files/crds/${file}`, import.meta.url), 'utf8');
      expect(chartCopy, `charts/didyma/files/crds/${file} differs from crds/${file}`).to.equal(fs.readFileSync(new URL(`../../crds/${file}`, import.meta.url), 'utf8'));
    }
  });
});
