import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { Config } from '../config/config.js';
import { KubeClient } from './client.js';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface KubeConnection {
  client: KubeClient;
  namespace: string;
}

/**
 * The cluster of Kubernetes mode, or undefined in the embedded default
 * (`DIDYMA_KUBE_MODE=off`). The client library is loaded only here, in
 * Kubernetes mode: importing it costs a process about 70 MiB.
 */
export function kubeConnection(config: Config): KubeConnection | undefined {
  if (config.kubeMode === 'off') return undefined;
  if (config.kubeMode === 'in-cluster') {
    const kc = loadKubeConfig((k) => k.loadFromCluster());
    return { client: new KubeClient(kc, config.kubeTimeoutMs), namespace: config.kubeNamespace || readIfExists(SERVICE_ACCOUNT_NAMESPACE) || 'default' };
  }
  const file = config.kubeconfig || path.join(os.homedir(), '.kube', 'config');
  if (!fs.existsSync(file)) throw new Error(`DIDYMA_KUBE_MODE=kubeconfig but the kubeconfig ${file} does not exist (set KUBECONFIG).`);
  const kc = loadKubeConfig((k) => k.loadFromFile(file));
  return { client: new KubeClient(kc, config.kubeTimeoutMs), namespace: config.kubeNamespace || contextNamespace(file) || 'default' };
}

function loadKubeConfig(load: (kc: KubeConfig) => void): Promise<KubeConfig> {
  const kc = import('@kubernetes/client-node').then(({ KubeConfig }) => {
    const loaded = new KubeConfig();
    load(loaded);
    return loaded;
  });
  kc.catch(() => undefined); // reported by the first request, which awaits it
  return kc;
}

/** The namespace of the kubeconfig's current context, read without the client library. */
function contextNamespace(file: string): string | undefined {
  const doc = (parse(fs.readFileSync(file, 'utf8')) ?? {}) as { 'current-context'?: string; contexts?: Array<{ name?: string; context?: { namespace?: string } }> };
  return doc.contexts?.find((c) => c.name === doc['current-context'])?.context?.namespace || undefined;
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
