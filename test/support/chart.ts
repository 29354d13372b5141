import { loadYaml } from '@kubernetes/client-node';
import YAML from 'yaml';
import type { KubeObject } from '../../infra/kube/resources.js';
import { runTool } from './chart-alerts.js';
import { helmPath, KUBE_API_VALUES, kubeconfigPath } from './kube.js';

export const CHART = 'charts/didyma';

/** Values given as `--set` pairs, `--set-json` where the value is not a string. */
export const setValues = (values: Record<string, unknown>): string[] =>
  Object.entries(values).flatMap(([key, value]) => (typeof value === 'string' ? ['--set', `${key}=${value}`] : ['--set-json', `${key}=${JSON.stringify(value)}`]));

/**
 * The objects of release "dy" in `namespace` as an install renders them (the
 * test cluster answers the lookups), its keys in an existing Secret and without
 * the CRDs, typed through loadYaml (client-node serializes by its models' field names).
 */
export async function renderChart(namespace: string, values: Record<string, unknown> = {}): Promise<KubeObject[]> {
  const args = ['template', 'dy', CHART, '--namespace', namespace, '--kubeconfig', kubeconfigPath(), '--dry-run=server'];
  const stdout = await runTool(helmPath(), [...args, ...KUBE_API_VALUES, ...setValues({ 'crds.enabled': 'false', 'secrets.existingSecret': 'didyma-keys', ...values })]);
  return YAML.parseAllDocuments(stdout)
    .filter((doc) => doc.contents)
    .map((doc) => loadYaml<KubeObject>(String(doc)));
}

/** The message a render fails with, or "rendered". */
export const renderRefusal = (namespace: string, values: Record<string, unknown>): Promise<string> =>
  renderChart(namespace, values).then(
    () => 'rendered',
    (error: Error) => error.message,
  );

/** The rendered objects of one kind. */
export const ofKind = <T = any>(objects: KubeObject[], kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];

/** Pod templates of every workload (Deployments, Jobs, StatefulSets) and bare Pod, by `Kind/name`. */
export function podsOf(objects: KubeObject[]): Map<string, any> {
  const pods = new Map<string, any>();
  for (const object of objects as any[]) {
    if (['Deployment', 'Job', 'StatefulSet'].includes(object.kind)) pods.set(`${object.kind}/${object.metadata.name}`, object.spec.template.spec);
    if (object.kind === 'Pod') pods.set(`Pod/${object.metadata.name}`, object.spec);
  }
  return pods;
}

/** Every container of a pod spec, init containers first. */
export const containersOf = (pod: any): any[] => [...(pod.initContainers ?? []), ...pod.containers];
