import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { loadYaml, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import YAML from 'yaml';
import { connect, type KubeApi } from '../../infra/kube/api.js';
import { isNotFound } from '../../infra/kube/errors.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import type { KubeObject } from '../../infra/kube/resources.js';
import { loadConfig } from '../../kernel/config/config.js';
import type { ConfigValues } from '../../kernel/config/variables.js';
import { createLogger } from '../../infra/logging/logger.js';
import { startOperator, type RunningOperator } from '../../operator/start.js';
import { requireEnv } from './services.js';

// The Kubernetes side of the integration tests. They run against whatever
// cluster TEST_KUBECONFIG names: the envtest-style control plane of
// scripts/services/kube.sh (make test), or any cluster (make test-kube-cluster).
// Each test file works in a namespace of its own.

export const kubeconfigPath = () => requireEnv('TEST_KUBECONFIG', 'kube');
export const helmPath = () => requireEnv('TEST_HELM', 'kube');

/** client-node's APIs as the given kubeconfig (the test cluster's by default). */
export function apiFor(kubeconfig = kubeconfigPath()): KubeApi {
  return connect((kc) => kc.loadFromFile(kubeconfig), 30_000);
}

export const CRD_FILES = ['didyma.io_modeldeployments.yaml', 'didyma.io_storageconfigs.yaml'].map((file) => path.resolve('crds', file));

/** CRDs of other projects whose objects the chart renders, written for the tests; a cluster's own copy is left alone. */
export const FOREIGN_CRD_FILES = [
  'monitoring.coreos.com_servicemonitors.yaml',
  'monitoring.coreos.com_prometheusrules.yaml',
  'gateway.networking.k8s.io_httproutes.yaml',
  'cert-manager.io_certificates.yaml',
].map((file) => path.resolve('test/fixtures/kube', file));

/** KServe's InferenceService CRD as written for the tests: only the tests of the KServe classes install it. */
export const KSERVE_CRD_FILE = path.resolve('test/fixtures/kube', 'serving.kserve.io_inferenceservices.yaml');

/** Installs the test's InferenceService CRD unless the cluster serves KServe's own. */
export const installKServeCrd = () => installCrds(apiFor(), [KSERVE_CRD_FILE]);

/** The credentials namespace the tests pair with a namespace, as the chart's default names it. */
export const credentialsNamespaceOf = (namespace: string) => `${namespace}-credentials`;

/**
 * A fresh namespace for one test file and its credentials namespace, on the
 * test cluster with the CRDs installed (never deleted: a bare control plane
 * has no namespace controller to finish them).
 */
export async function testNamespace(prefix: string): Promise<KubeConnection> {
  return createTestNamespace(testNamespaceName(prefix));
}

/** A fresh name for a test namespace, not created yet. */
export const testNamespaceName = (prefix: string) => `${prefix}-${crypto.randomBytes(4).toString('hex')}`;

/** Creates the namespace `namespace` and its credentials namespace (as testNamespace, under a name chosen beforehand). */
export async function createTestNamespace(namespace: string): Promise<KubeConnection> {
  const api = apiFor();
  await installCrds(api);
  for (const name of [namespace, credentialsNamespaceOf(namespace)]) await api.core.createNamespace({ body: { metadata: { name, labels: { 'didyma.io/test': 'true' } } } });
  return { namespace, credentialsNamespace: credentialsNamespaceOf(namespace), api: async () => api };
}

/**
 * Applies the CRDs of crds/ (server-side apply: idempotent), and the foreign
 * ones of test/fixtures/kube unless the cluster has its own (the Prometheus
 * operator's, say), then waits until the API serves them.
 */
async function installCrds(api: KubeApi, files = [...CRD_FILES, ...FOREIGN_CRD_FILES]): Promise<void> {
  for (const file of files) {
    // Typed through loadYaml: client-node serializes a CRD by its model's field names (x-kubernetes-validations is xKubernetesValidations).
    const crd = loadYaml<V1CustomResourceDefinition>(fs.readFileSync(file, 'utf8'));
    const ref = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crd.metadata!.name! } };
    if (!CRD_FILES.includes(file)) {
      const existing = await api.objects.read<V1CustomResourceDefinition>(ref).catch((error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      });
      if (existing && existing.metadata?.labels?.['didyma.io/test'] !== 'true') continue;
    }
    await api.apply(crd, 'didyma-tests');
    await waitFor(`CRD ${ref.metadata.name} established`, async () => {
      const current = await api.objects.read<V1CustomResourceDefinition>(ref);
      return current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? current : undefined;
    });
  }
}

/** Polls until `check` returns a value other than undefined/false, or fails naming what it waited for. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Environment of an operator (in-process or `didyma operator` child) working on one test namespace. */
export function operatorEnv(namespace: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DIDYMA_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DIDYMA_KUBE_MODE: 'kubeconfig',
    KUBECONFIG: kubeconfigPath(),
    DIDYMA_KUBE_NAMESPACE: namespace,
    DIDYMA_KUBE_CREDENTIALS_NAMESPACE: credentialsNamespaceOf(namespace),
    // Test model servers listen on loopback.
    DIDYMA_DEV_MODE: 'true',
    DIDYMA_OPERATOR_PORT: '0',
    DIDYMA_OPERATOR_PROBE_SECONDS: '5',
    DIDYMA_LEASE_SECONDS: '3',
    DIDYMA_UPSTREAM_TIMEOUT_MS: '3000',
    DIDYMA_DATA_DIR: path.join(process.env.TMPDIR ?? '/tmp', `didyma-operator-${namespace}`),
    ...extra,
  };
}

/** The platform config overrides of Kubernetes mode on one test namespace. */
export function kubeOverrides(namespace: string): Partial<ConfigValues> {
  return { kubeMode: 'kubeconfig', kubeconfig: kubeconfigPath(), kubeNamespace: namespace, kubeCredentialsNamespace: credentialsNamespaceOf(namespace), kubeResyncSeconds: 0 };
}

export function startTestOperator(namespace: string, extra: Record<string, string> = {}): Promise<RunningOperator> {
  const config = loadConfig(operatorEnv(namespace, extra));
  return startOperator(config, createLogger(config.logLevel));
}

/** Applies an object as a test would with kubectl (its own field manager, so the API's fields stay the API's). */
export async function kubectlApply(kube: KubeConnection, object: KubeObject): Promise<KubeObject> {
  return (await kube.api()).apply(object, 'kubectl-test');
}

/** A copy of the test kubeconfig acting as a ServiceAccount (impersonation): what RBAC lets that account do. */
export function kubeconfigAs(namespace: string, serviceAccount: string): string {
  const config = YAML.parse(fs.readFileSync(kubeconfigPath(), 'utf8')) as { users: Array<{ user: Record<string, unknown> }> };
  for (const entry of config.users) entry.user.as = `system:serviceaccount:${namespace}:${serviceAccount}`;
  const file = path.join(process.env.TMPDIR ?? '/tmp', `didyma-kubeconfig-${namespace}-${serviceAccount}.yaml`);
  fs.writeFileSync(file, YAML.stringify(config), { mode: 0o600 });
  return file;
}

/**
 * The API server's address for the chart's egress policy. This control plane publishes no endpoints of its
 * `kubernetes` Service (its API server listens on loopback), so every render names it, as one without cluster access must.
 */
export const KUBE_API_VALUES = ['--set', 'networkPolicy.egress.kubernetesApi.cidrs={192.0.2.10/32}'];
