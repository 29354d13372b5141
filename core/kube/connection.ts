import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Config } from '../config/config.js';
import { KubeClient } from './client.js';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface KubeConnection {
  client: KubeClient;
  namespace: string;
}

/** The cluster of Kubernetes mode, or undefined in the embedded default (`MODELPLANE_KUBE_MODE=off`). */
export function kubeConnection(config: Config): KubeConnection | undefined {
  if (config.kubeMode === 'off') return undefined;
  const kc = new KubeConfig();
  let namespace = config.kubeNamespace;
  if (config.kubeMode === 'in-cluster') {
    kc.loadFromCluster();
    namespace ||= readIfExists(SERVICE_ACCOUNT_NAMESPACE) ?? 'default';
  } else {
    const file = config.kubeconfig || path.join(os.homedir(), '.kube', 'config');
    if (!fs.existsSync(file)) throw new Error(`MODELPLANE_KUBE_MODE=kubeconfig but the kubeconfig ${file} does not exist (set KUBECONFIG).`);
    kc.loadFromFile(file);
    namespace ||= kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
  }
  return { client: new KubeClient(kc, config.kubeTimeoutMs), namespace };
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
