import { expect } from 'chai';
import { FINALIZER } from '../../infra/kube/constants.js';
import { isNotFound } from '../../infra/kube/errors.js';
import { proxyConfigMapName } from '../../infra/kube/names.js';
import { resourceRef, type KubeObject } from '../../infra/kube/resources.js';
import { DesiredStateWriter } from '../../infra/kube/writer.js';
import { loadConfig } from '../../kernel/config/config.js';
import { createLogger } from '../../infra/logging/logger.js';
import { releaseFinalizers } from '../../operator/release.js';
import { startDemoModelServer } from '../support/fixtures.js';
import { operatorEnv, startTestOperator, testNamespace, waitFor } from '../support/kube.js';

describe('Kubernetes: releasing the operator finalizers (the chart runs it after helm uninstall)', function () {
  this.timeout(120_000);

  it('takes the finalizer off every resource once the operator is gone, so that deleting them no longer waits, and deletes its proxy ConfigMaps', async () => {
    const kube = await testNamespace('dy-release');
    const demo = await startDemoModelServer();
    const operator = await startTestOperator(kube.namespace);
    try {
      const writer = new DesiredStateWriter(kube, createLogger('silent'));
      const url = demo.url;
      const { metadata } = await writer.apply({
        kind: 'deployment',
        workspace: 'default',
        key: 'release-me',
        registry: { className: 'didyma.registry.OpenInferenceRegistryConnector', init: { model_registry_url: url, tracking_server_url: url } },
        serverProxy: { className: 'didyma.proxy.OpenInferenceServerProxy', init: { server_proxy_url: url } },
        secrets: {},
      });
      const ref = resourceRef('deployment', kube.namespace, metadata.name);
      const read = async () => (await kube.api()).objects.read<KubeObject>(ref);
      await waitFor('the operator finalizer', async () => (await read()).metadata.finalizers?.includes(FINALIZER));
      const configMap = () => kube.api().then((api) => api.core.readNamespacedConfigMap({ name: proxyConfigMapName('didyma-proxy-config', 'default'), namespace: kube.namespace }));
      await waitFor('the proxy ConfigMap', () => configMap().then(() => true));
      await operator.close();

      const config = loadConfig(operatorEnv(kube.namespace, { DIDYMA_LEASE_SECONDS: '2' }));
      expect(await releaseFinalizers(config, createLogger('silent'))).to.equal(2);
      expect((await read()).metadata.finalizers ?? []).to.not.include(FINALIZER);
      expect(await configMap().then(() => false, isNotFound)).to.equal(true);
      expect(await releaseFinalizers(config, createLogger('silent'))).to.equal(0);

      await (await kube.api()).delete(ref);
      await waitFor('the resource to be gone', () => read().then(() => false, isNotFound));
    } finally {
      await operator.close();
      await demo.close();
    }
  });
});
