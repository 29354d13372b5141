import { isDeepStrictEqual } from 'node:util';
import type { KubeConnection } from './connection.js';
import { KINDS, type ResourceKind } from './constants.js';
import type { Desired } from './desired.js';
import { secretName } from './names.js';
import { credentialsSecret, customResource, nameOf, type KubeObject } from './resources.js';

export interface ResyncPlan {
  apply: Desired[];
  deleteResources: Array<{ kind: ResourceKind; name: string }>;
  deleteSecrets: string[];
  unchanged: number;
}

/** Where the custom resources and where their credentials Secrets live. */
export type Namespaces = Pick<KubeConnection, 'namespace' | 'credentialsNamespace'>;

export interface ClusterState {
  resources: KubeObject[];
  secrets: KubeObject[];
}

const kindOf = (object: KubeObject): ResourceKind => (object.kind === KINDS.deployment.kind ? 'deployment' : 'storage');
const age = (object: KubeObject, now: number) => now - new Date(object.metadata.creationTimestamp ?? now).getTime();

/** What differs between the desired and the applied object in the fields the API owns. */
function inSync(desired: KubeObject, actual: KubeObject | undefined): boolean {
  if (!actual || actual.metadata.deletionTimestamp) return false;
  const owned = (object: KubeObject) => ({ labels: object.metadata.labels, annotations: object.metadata.annotations, spec: object.spec, data: object.data });
  const mine = owned(desired);
  const theirs = owned(actual);
  // Others may add labels and annotations; only ours must be there and equal.
  const subset = (ours: Record<string, string> | undefined, all: Record<string, string> | undefined) => Object.entries(ours ?? {}).every(([key, value]) => all?.[key] === value);
  return subset(mine.labels, theirs.labels) && subset(mine.annotations, theirs.annotations) && isDeepStrictEqual(mine.spec, theirs.spec) && isDeepStrictEqual(mine.data, theirs.data);
}

/**
 * Compares the database (desired) with the cluster (actual). Resources and
 * Secrets nobody wants any more are deleted, but only once older than
 * `graceMs`: an API replica may have applied one inside a transaction that
 * has not committed yet, and deleting it would be wrong.
 */
export function planResync(desired: readonly Desired[], actual: ClusterState, namespaces: Namespaces, now: number, graceMs: number): ResyncPlan {
  const resources = new Map(actual.resources.map((object) => [`${kindOf(object)}/${object.metadata.name}`, object]));
  const secrets = new Map(actual.secrets.map((object) => [object.metadata.name, object]));
  const plan: ResyncPlan = { apply: [], deleteResources: [], deleteSecrets: [], unchanged: 0 };
  const wantedResources = new Set<string>();
  const wantedSecrets = new Set<string>();
  for (const item of desired) {
    const name = nameOf(item);
    wantedResources.add(`${item.kind}/${name}`);
    const secret = credentialsSecret(item, namespaces.credentialsNamespace);
    if (secret) wantedSecrets.add(secret.metadata.name);
    const resourceOk = inSync(customResource(item, namespaces.namespace), resources.get(`${item.kind}/${name}`));
    const secretOk = secret ? inSync(secret, secrets.get(secret.metadata.name)) : !secrets.has(secretName(name));
    if (resourceOk && secretOk) plan.unchanged += 1;
    else plan.apply.push(item);
  }
  for (const [id, object] of resources) {
    if (!wantedResources.has(id) && !object.metadata.deletionTimestamp && age(object, now) >= graceMs) {
      plan.deleteResources.push({ kind: kindOf(object), name: object.metadata.name });
    }
  }
  // Deleting a resource deletes its Secret too.
  const goingWithResources = new Set(plan.deleteResources.map(({ name }) => secretName(name)));
  for (const [name, object] of secrets) {
    if (!wantedSecrets.has(name) && !goingWithResources.has(name) && age(object, now) >= graceMs) plan.deleteSecrets.push(name);
  }
  return plan;
}
