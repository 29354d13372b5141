import type { Logger } from 'pino';
import type { KubeConnection } from '../infra/kube/connection.js';
import { FIELD_MANAGERS, FINALIZER, GROUP, KINDS, VERSION } from '../infra/kube/constants.js';
import { isNotFound } from '../infra/kube/errors.js';
import { configEntryKey } from '../infra/kube/names.js';
import { entryText } from '../infra/kube/proxy-config.js';
import { resourceRef, type KubeObject } from '../infra/kube/resources.js';
import { readSecret } from '../infra/kube/secrets.js';
import { nextStatus, sameStatus, transitions, type ConditionUpdate, type ResourceStatus } from './conditions.js';
import type { EventRecorder } from './events.js';
import type { KindHandler, Problem } from './kinds.js';
import type { ProxyConfigMaps } from './proxy-config-maps.js';
import type { SecretCollector } from './secret-collector.js';

export interface ReconcileDeps {
  kube: KubeConnection;
  handler: KindHandler;
  configMaps: ProxyConfigMaps;
  /** Deletes a finalized resource's Secrets. */
  secrets: Pick<SecretCollector, 'release'>;
  events: EventRecorder;
  logger: Logger;
  /** Ready resources are probed again after this long. */
  probeIntervalMs: number;
  now?: () => Date;
}

export type Result = 'ready' | 'not-ready' | 'invalid' | 'gone' | 'finalized';

/** What the controller does next with the key: nothing, come back later, or retry with backoff. */
export interface Outcome {
  result: Result;
  requeueAfterMs?: number;
  retry?: boolean;
}

type Resource = KubeObject & { spec: unknown; status?: ResourceStatus };

export interface Evaluation {
  conditions: ConditionUpdate[];
  outcome: Outcome;
}

/**
 * Brings one resource's proxy configuration in line with its spec. It reads
 * everything afresh (never trusts the event that queued it), writes only what
 * differs, and leaves the same state whether it runs once or twice, or is
 * interrupted at any point and run again.
 */
export async function reconcile(deps: ReconcileDeps, name: string): Promise<Outcome> {
  const entryKey = configEntryKey(deps.handler.kind, name);
  const object = await readResource(deps, name);
  if (!object) {
    // Deleted without our finalizer (or before we ever saw it): make sure nothing is left.
    await deps.configMaps.remove(entryKey);
    return { result: 'gone' };
  }
  if (object.metadata.deletionTimestamp) return finalize(deps, object, entryKey);
  const current = await ensureFinalizer(deps, object);
  const evaluation = judge(await check(deps, current, entryKey), deps.configMaps.nameOf(workspaceOf(deps, current)), deps.probeIntervalMs);
  await writeStatus(deps, current, evaluation.conditions);
  return evaluation.outcome;
}

async function readResource(deps: ReconcileDeps, name: string): Promise<Resource | undefined> {
  try {
    return await (await deps.kube.api()).objects.read<Resource>(resourceRef(deps.handler.kind, deps.kube.namespace, name));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The workspace a resource configures, whose ConfigMap holds its entry. */
const workspaceOf = (deps: ReconcileDeps, object: Resource) => deps.handler.entry(object.spec).workspace;

/** What the checks of a resource found, the first problem winning. */
export type Finding = { found: 'secret-missing'; secret: string } | { found: 'invalid' | 'unreachable'; problem: Problem } | { found: 'healthy' };

/** Runs the checks, keeping the resource's ConfigMap entry only while its spec is valid. */
async function check(deps: ReconcileDeps, object: Resource, entryKey: string): Promise<Finding> {
  const { handler } = deps;
  const unconfigured = async (finding: Finding) => {
    // A spec no longer valid must not leave its previous configuration in use.
    await deps.configMaps.remove(entryKey, workspaceOf(deps, object));
    return finding;
  };
  const secret = handler.secretName(object.spec);
  let secrets: Record<string, string> = {};
  if (secret) {
    const read = await readSecret(deps.kube, secret).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    if (!read) return unconfigured({ found: 'secret-missing', secret });
    secrets = read;
  }
  const invalid = handler.validate(object.spec, secrets);
  if (invalid) return unconfigured({ found: 'invalid', problem: invalid });
  const entry = handler.entry(object.spec);
  await deps.configMaps.put(entry.workspace, entryKey, entryText(entry));
  const unreachable = await handler.probe(object.spec, secrets);
  return unreachable ? { found: 'unreachable', problem: unreachable } : { found: 'healthy' };
}

/** The conditions and next step for what the checks found: pure, so a table test covers every case. */
export function judge(finding: Finding, configMap: string, probeIntervalMs: number): Evaluation {
  switch (finding.found) {
    case 'secret-missing':
      return notConfigured('SecretMissing', `Secret ${finding.secret} named by secretRef does not exist.`, { result: 'not-ready', retry: true });
    case 'invalid':
      return notConfigured(finding.problem.reason, finding.problem.message, { result: 'invalid' });
    case 'unreachable':
      return {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'Unreachable', message: `Configuration written to ConfigMap ${configMap}, but a health check failed: ${finding.problem.message}` },
          { type: 'Reachable', status: 'False', reason: finding.problem.reason, message: finding.problem.message },
        ],
        outcome: { result: 'not-ready', retry: true },
      };
    case 'healthy':
      return {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Configured', message: `Configuration written to ConfigMap ${configMap}; endpoints healthy.` },
          { type: 'Reachable', status: 'True', reason: 'HealthChecksPassed', message: 'Every endpoint answered its health check.' },
        ],
        outcome: { result: 'ready', requeueAfterMs: probeIntervalMs },
      };
  }
}

function notConfigured(reason: string, message: string, outcome: Outcome): Evaluation {
  return {
    conditions: [
      { type: 'Ready', status: 'False', reason, message },
      { type: 'Reachable', status: 'Unknown', reason: 'NotProbed', message: 'Endpoints are probed once the configuration is valid.' },
    ],
    outcome,
  };
}

async function writeStatus(deps: ReconcileDeps, object: Resource, conditions: ConditionUpdate[]): Promise<void> {
  const now = (deps.now ?? (() => new Date()))().toISOString();
  const status = nextStatus(object.status, object.metadata.generation ?? 0, conditions, now);
  if (sameStatus(object.status, status)) return;
  const target = { group: GROUP, version: VERSION, plural: KINDS[deps.handler.kind].plural, namespace: deps.kube.namespace, name: object.metadata.name };
  await (await deps.kube.api()).patchStatus({ ...target, fieldManager: FIELD_MANAGERS.operator }, status);
  for (const condition of transitions(object.status, status).filter((c) => c.type === 'Ready')) {
    await deps.events.record(object, condition.status === 'True' ? 'Normal' : 'Warning', condition.reason, condition.message);
  }
  deps.logger.info({ kind: KINDS[deps.handler.kind].kind, name: object.metadata.name, generation: status.observedGeneration, ready: conditions[0]?.status, reason: conditions[0]?.reason }, 'status updated');
}

/** Adds our finalizer (optimistic lock on resourceVersion: a concurrent change makes this attempt fail and retry). */
async function ensureFinalizer(deps: ReconcileDeps, object: Resource): Promise<Resource> {
  const finalizers = object.metadata.finalizers ?? [];
  if (finalizers.includes(FINALIZER)) return object;
  return setFinalizers(deps, object, [...finalizers, FINALIZER]);
}

async function setFinalizers(deps: ReconcileDeps, object: Resource, finalizers: string[]): Promise<Resource> {
  const ref = resourceRef(deps.handler.kind, deps.kube.namespace, object.metadata.name);
  const patch = { ...ref, metadata: { ...ref.metadata, resourceVersion: object.metadata.resourceVersion, finalizers } };
  return (await deps.kube.api()).mergePatch<Resource>(patch, FIELD_MANAGERS.operator);
}

/** Deletion: remove the configuration and the credentials first, then let the resource go. */
async function finalize(deps: ReconcileDeps, object: Resource, entryKey: string): Promise<Outcome> {
  const finalizers = object.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER)) return { result: 'finalized' };
  const workspace = workspaceOf(deps, object);
  await deps.configMaps.remove(entryKey, workspace);
  await deps.secrets.release(deps.handler.kind, object.metadata.name, new Date(object.metadata.deletionTimestamp!));
  await deps.events.record(object, 'Normal', 'ConfigurationRemoved', `Entry ${entryKey} removed from ConfigMap ${deps.configMaps.nameOf(workspace)}.`);
  try {
    await setFinalizers(deps, object, finalizers.filter((finalizer) => finalizer !== FINALIZER));
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  deps.logger.info({ kind: KINDS[deps.handler.kind].kind, name: object.metadata.name }, 'finalized');
  return { result: 'finalized' };
}
