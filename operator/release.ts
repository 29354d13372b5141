import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Config } from '../kernel/config/config.js';
import { kubeConnection } from '../infra/kube/connection.js';
import { API_VERSION, FIELD_MANAGERS, FINALIZER, KINDS } from '../infra/kube/constants.js';
import { isNotFound } from '../infra/kube/errors.js';
import { proxyConfigSelector } from '../infra/kube/names.js';
import type { KubeApi } from '../infra/kube/api.js';

/**
 * When the operator is gone for good (helm uninstall runs this after deleting
 * the release), its finalizer would block every later deletion of the
 * resources and of their namespace, and its proxy ConfigMaps serve no
 * executor any more. Takes the finalizer off every resource of the namespace
 * and deletes the ConfigMaps, pass after pass a lease apart, until a pass
 * finds neither (an operator replica still shutting down may have put one
 * back). Answers how many finalizers and ConfigMaps it took away.
 */
export async function releaseFinalizers(config: Config, logger: Logger): Promise<number> {
  const kube = kubeConnection(config);
  if (!kube) throw new Error('DIDYMA_KUBE_MODE is off: there is no cluster to release finalizers in.');
  const api = await kube.api();
  let total = 0;
  for (;;) {
    const released = (await releasePass(api, kube.namespace)) + (await deleteProxyConfigMaps(api, kube.namespace, config.proxyConfigMap));
    total += released;
    if (released === 0) break;
    await sleep(config.leaseSeconds * 1000);
  }
  logger.info({ namespace: kube.namespace, released: total }, 'released the operator finalizers and deleted its proxy ConfigMaps');
  return total;
}

async function deleteProxyConfigMaps(api: KubeApi, namespace: string, prefix: string): Promise<number> {
  const { items } = await api.list('v1', 'ConfigMap', namespace, { labelSelector: proxyConfigSelector(prefix) });
  for (const item of items) await api.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: item.metadata!.name!, namespace } });
  return items.length;
}

async function releasePass(api: KubeApi, namespace: string): Promise<number> {
  let released = 0;
  for (const { kind } of Object.values(KINDS)) {
    for (const item of (await api.list(API_VERSION, kind, namespace)).items) {
      const finalizers = item.metadata?.finalizers ?? [];
      if (!finalizers.includes(FINALIZER)) continue;
      const metadata = { name: item.metadata!.name!, namespace, resourceVersion: item.metadata!.resourceVersion, finalizers: finalizers.filter((f) => f !== FINALIZER) };
      try {
        await api.mergePatch({ apiVersion: API_VERSION, kind, metadata }, FIELD_MANAGERS.operator);
        released++;
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }
  return released;
}
