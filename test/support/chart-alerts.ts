import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { helmPath } from './kube.js';

const run = promisify(execFile);

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}
export interface PrometheusRule {
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: { groups: RuleGroup[] };
}

/** Runs a tool, failing with its whole output. */
export async function runTool(file: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(file, args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout + stderr;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${path.basename(file)} ${args.join(' ')} failed:\n${stderr}\n${stdout}`);
  }
}

/** The PrometheusRules of the chart as `helm template` renders release "dy" without cluster access (the keys and the API server's address named, none generated or looked up). */
export async function renderPrometheusRules(namespace: string, ...sets: string[]): Promise<PrometheusRule[]> {
  const offline = ['secrets.existingSecret=didyma-keys', 'networkPolicy.egress.kubernetesApi.cidrs={192.0.2.10/32}'];
  const args = ['template', 'dy', 'charts/didyma', '--namespace', namespace, ...[...offline, ...sets].flatMap((value) => ['--set', value])];
  return YAML.parseAllDocuments(await runTool(helmPath(), args))
    .map((doc) => doc.toJS() as PrometheusRule | null)
    .filter((object): object is PrometheusRule => object?.kind === 'PrometheusRule');
}

/** The one PrometheusRule of a render with alerts on. */
export async function renderAlerts(namespace: string, ...sets: string[]): Promise<PrometheusRule> {
  const rules = await renderPrometheusRules(namespace, 'alerts.enabled=true', ...sets);
  if (rules.length !== 1) throw new Error(`expected one PrometheusRule with alerts on, rendered ${rules.length}`);
  return rules[0]!;
}

export const rulesOf = (rule: PrometheusRule): AlertRule[] => rule.spec.groups.flatMap((group) => group.rules);

/** A Prometheus rules file of the given groups (what a PrometheusRule's spec holds). */
export const rulesFile = (groups: RuleGroup[]): string => YAML.stringify({ groups });
