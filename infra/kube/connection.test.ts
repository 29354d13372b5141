import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../kernel/config/config.js';
import { fence, kubeConnection } from './connection.js';

describe('kubeConnection', () => {
  const kubeconfig = path.join(os.tmpdir(), `didyma-connection-test-${process.pid}.yaml`);
  before(() => {
    const doc = [
      'apiVersion: v1',
      'kind: Config',
      'current-context: test',
      'clusters: [{ name: test, cluster: { server: "https://127.0.0.1:1" } }]',
      'users: [{ name: test, user: { token: t } }]',
      'contexts: [{ name: test, context: { cluster: test, user: test, namespace: tenants } }]',
    ].join('\n');
    fs.writeFileSync(kubeconfig, doc);
  });
  after(() => fs.rmSync(kubeconfig, { force: true }));

  const connect = (env: Record<string, string>) => kubeConnection(loadConfig({ DIDYMA_KUBE_MODE: 'kubeconfig', KUBECONFIG: kubeconfig, ...env }))!;

  it('keeps credentials beside the resources unless a credentials namespace is configured', () => {
    expect(connect({})).to.include({ namespace: 'tenants', credentialsNamespace: 'tenants' });
    expect(connect({ DIDYMA_KUBE_NAMESPACE: 'didyma' })).to.include({ namespace: 'didyma', credentialsNamespace: 'didyma' });
    expect(connect({ DIDYMA_KUBE_NAMESPACE: 'didyma', DIDYMA_KUBE_CREDENTIALS_NAMESPACE: 'didyma-credentials' })).to.include({ namespace: 'didyma', credentialsNamespace: 'didyma-credentials' });
  });

  it('keeps both namespaces when fenced', () => {
    const fenced = fence(connect({ DIDYMA_KUBE_CREDENTIALS_NAMESPACE: 'keys' }), () => undefined);
    expect(fenced).to.include({ namespace: 'tenants', credentialsNamespace: 'keys' });
  });

  it('is off in the embedded default', () => {
    expect(kubeConnection(loadConfig({ DIDYMA_KUBE_CREDENTIALS_NAMESPACE: 'keys' }))).to.equal(undefined);
  });
});
