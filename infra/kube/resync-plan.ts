import { isDeepStrictEqual } from 'node:util';
import type { KubeConnection } from './connection.js';
import { KINDS, type ResourceKind } from './constants.js';
import type { Desired } from './desired.js';
import { secretName } from './names.js';
import { credentialsSecret, customResource, nameOf, type KubeObject } from './resources.js';

/** A deleted deployment or storage configuration whose resource may still be in the cluster. */
export interface Removal {
  kind: ResourceKind;
  workspace: string;
  key: string;
}

/** What the database wants: the live rows, and the deleted ones not yet known to be gone. */
export interface Wanted {
  desired: readonly Desired[];
  removals: readonly Removal[];
}

export interface ResyncPlan {
  /** Missing or different in the cluster (the same objects as in `Wanted`). */
  apply: Desired[];
  /** As wanted already. */
  inSync: Desired[];
  deleteResources: Array<{ kind: ResourceKind; name: string }>;
  deleteSecrets: string[];
  /** Removals whose resource and Secret are gone (or now belong to a live row of the same name): done. */
  removed: Removal[];
  /** Removals whose resource or Secret is still there: deleted by this pass, or still being finalized. */
  removing: Removal[];
}

/** Where the custom resources and where their credentials Secrets live. */
export type Namespaces = Pick<KubeConnection, 'namespace' | 'credentialsNamespace'>;

export interface ClusterState {
  resources: KubeObject[];
  secrets: KubeObject[];
}

const kindOf = (object: KubeObject): ResourceKind => (object.kind === KINDS.deployment.kind ? 'deployment' : 'storage');
const age = (object: KubeObject, now: number) => now - new Date(object.metadata.creationTimestamp ?? now).getTime();
const idOf = (kind: ResourceKind, name: string) => `${kind}/${name}`;

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
 * Compares the database (wanted) with the cluster (actual). The resource of
 * a deleted row is deleted at once; resources and Secrets no row knows of are
 * deleted once older than `graceMs`, since a replica of an earlier version
 * may have applied one inside a transaction that has not committed yet.
 */
export function planResync(wanted: Wanted, actual: ClusterState, namespaces: Namespaces, now: number, graceMs: number): ResyncPlan {
  const resources = new Map(actual.resources.map((object) => [idOf(kindOf(object), object.metadata.name), object]));
  const secrets = new Map(actual.secrets.map((object) => [object.metadata.name, object]));
  const plan: ResyncPlan = { apply: [], inSync: [], deleteResources: [], deleteSecrets: [], removed: [], removing: [] };
  const wantedResources = new Set<string>();
  const wantedSecrets = new Set<string>();
  for (const item of wanted.desired) {
    const name = nameOf(item);
    wantedResources.add(idOf(item.kind, name));
    const secret = credentialsSecret(item, namespaces.credentialsNamespace);
    if (secret) wantedSecrets.add(secret.metadata.name);
    const resourceOk = inSync(customResource(item, namespaces.namespace), resources.get(idOf(item.kind, name)));
    const secretOk = secret ? inSync(secret, secrets.get(secret.metadata.name)) : !secrets.has(secretName(name));
    (resourceOk && secretOk ? plan.inSync : plan.apply).push(item);
  }
  const removedNow = new Set<string>();
  for (const removal of wanted.removals) {
    const name = nameOf(removal);
    const id = idOf(removal.kind, name);
    const resource = resources.get(id);
    if (wantedResources.has(id) || (!resource && !secrets.has(secretName(name)))) {
      plan.removed.push(removal);
      continue;
    }
    plan.removing.push(removal);
    if (resource && !resource.metadata.deletionTimestamp && !removedNow.has(id)) plan.deleteResources.push({ kind: removal.kind, name });
    else if (secrets.has(secretName(name))) plan.deleteSecrets.push(secretName(name));
    removedNow.add(id);
  }
  for (const [id, object] of resources) {
    if (!wantedResources.has(id) && !removedNow.has(id) && !object.metadata.deletionTimestamp && age(object, now) >= graceMs) {
      plan.deleteResources.push({ kind: kindOf(object), name: object.metadata.name });
    }
  }
  // Deleting a resource deletes its Secret too.
  const going = new Set([...plan.deleteResources.map(({ name }) => secretName(name)), ...plan.deleteSecrets]);
  for (const [name, object] of secrets) {
    if (!wantedSecrets.has(name) && !going.has(name) && age(object, now) >= graceMs) plan.deleteSecrets.push(name);
  }
  return plan;
}
