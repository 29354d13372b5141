import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { Config } from '../../kernel/config/config.js';
import type { KubeApi } from './api.js';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface KubeConnection {
  /** Of the custom resources, the proxy ConfigMap, the Lease and Events. */
  namespace: string;
  /** Of the Secrets with the resources' credentials: the only Secrets any component reads or writes. */
  credentialsNamespace: string;
  /** client-node's APIs on the cluster (a failure to load the kubeconfig surfaces here, on every call). */
  api(): Promise<KubeApi>;
}

/**
 * The cluster of Kubernetes mode, or undefined in the embedded default
 * (`DIDYMA_KUBE_MODE=off`). The client library is loaded only here, in
 * Kubernetes mode: importing it costs a process about 70 MiB.
 */
export function kubeConnection(config: Config): KubeConnection | undefined {
  if (config.kubeMode === 'off') return undefined;
  const credentialsNamespace = (namespace: string) => config.kubeCredentialsNamespace ?? namespace;
  if (config.kubeMode === 'in-cluster') {
    const namespace = config.kubeNamespace || readIfExists(SERVICE_ACCOUNT_NAMESPACE) || 'default';
    return { namespace, credentialsNamespace: credentialsNamespace(namespace), api: loadApi((kc) => kc.loadFromCluster(), config.kubeTimeoutMs) };
  }
  const file = config.kubeconfig || path.join(os.homedir(), '.kube', 'config');
  if (!fs.existsSync(file)) throw new Error(`DIDYMA_KUBE_MODE=kubeconfig but the kubeconfig ${file} does not exist (set KUBECONFIG).`);
  const namespace = config.kubeNamespace || contextNamespace(file) || 'default';
  return { namespace, credentialsNamespace: credentialsNamespace(namespace), api: loadApi((kc) => kc.loadFromFile(file), config.kubeTimeoutMs) };
}

/** The same connection, refusing every write while `guard` throws. */
export function fence(kube: KubeConnection, guard: () => void): KubeConnection {
  const api = kube.api().then((unfenced) => unfenced.fenced(guard));
  api.catch(() => undefined); // reported by the first call, which awaits it
  return { namespace: kube.namespace, credentialsNamespace: kube.credentialsNamespace, api: () => api };
}

/** client-node's APIs as the pod's ServiceAccount or a kubeconfig file (empty: `~/.kube/config`), loaded at first use. */
export function kubeApiOf(mode: 'in-cluster' | 'kubeconfig', kubeconfig: string, timeoutMs: number): () => Promise<KubeApi> {
  if (mode === 'in-cluster') return loadApi((kc) => kc.loadFromCluster(), timeoutMs);
  const file = kubeconfig || path.join(os.homedir(), '.kube', 'config');
  return loadApi((kc) => kc.loadFromFile(file), timeoutMs);
}

function loadApi(load: (kc: KubeConfig) => void, timeoutMs: number): () => Promise<KubeApi> {
  const api = import('./api.js').then(({ connect }) => connect(load, timeoutMs));
  api.catch(() => undefined); // reported by the first call, which awaits it
  return () => api;
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
