import { isDeepStrictEqual } from 'node:util';
import type { KubeConnection } from './connection.js';
import { KINDS, type ResourceKind } from './constants.js';
import type { Desired } from './desired.js';
import { customResource, nameOf, type KubeObject } from './resources.js';

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
  /** Removals whose resource is gone (or now belongs to a live row of the same name): done. */
  removed: Removal[];
  /** Removals whose resource is still there: deleted by this pass, or still being finalized. */
  removing: Removal[];
}

/** Where the custom resources and where their credentials Secrets live. */
export type Namespaces = Pick<KubeConnection, 'namespace' | 'credentialsNamespace'>;

/**
 * The managed custom resources. Never the Secrets: the API may create but not
 * read them, so it knows them by the resources that name them, each
 * resource's secretRef naming the version of its credentials.
 */
export interface ClusterState {
  resources: KubeObject[];
}

const kindOf = (object: KubeObject): ResourceKind => (object.kind === KINDS.deployment.kind ? 'deployment' : 'storage');
const age = (object: KubeObject, now: number) => now - new Date(object.metadata.creationTimestamp ?? now).getTime();
const idOf = (kind: ResourceKind, name: string) => `${kind}/${name}`;

/** What differs between the desired and the applied object in the fields the API owns. */
function inSync(desired: KubeObject, actual: KubeObject | undefined): boolean {
  if (!actual || actual.metadata.deletionTimestamp) return false;
  const owned = (object: KubeObject) => ({ labels: object.metadata.labels, annotations: object.metadata.annotations, spec: object.spec });
  const mine = owned(desired);
  const theirs = owned(actual);
  // Others may add labels and annotations; only ours must be there and equal.
  const subset = (ours: Record<string, string> | undefined, all: Record<string, string> | undefined) => Object.entries(ours ?? {}).every(([key, value]) => all?.[key] === value);
  return subset(mine.labels, theirs.labels) && subset(mine.annotations, theirs.annotations) && isDeepStrictEqual(mine.spec, theirs.spec);
}

/**
 * Compares the database (wanted) with the cluster (actual). The resource of
 * a deleted row is deleted at once (the operator's finalizer deletes its
 * Secrets); resources no row knows of are deleted once older than
 * `graceMs`, since a replica of an earlier version may have applied one
 * inside a transaction that has not committed yet.
 */
export function planResync(wanted: Wanted, actual: ClusterState, namespaces: Namespaces, now: number, graceMs: number): ResyncPlan {
  const resources = new Map(actual.resources.map((object) => [idOf(kindOf(object), object.metadata.name), object]));
  const plan: ResyncPlan = { apply: [], inSync: [], deleteResources: [], removed: [], removing: [] };
  const wantedResources = new Set<string>();
  for (const item of wanted.desired) {
    const id = idOf(item.kind, nameOf(item));
    wantedResources.add(id);
    // The writer creates the Secret before it applies the resource, so a resource in sync vouches for its Secret.
    (inSync(customResource(item, namespaces.namespace), resources.get(id)) ? plan.inSync : plan.apply).push(item);
  }
  const removedNow = new Set<string>();
  for (const removal of wanted.removals) {
    const name = nameOf(removal);
    const id = idOf(removal.kind, name);
    const resource = resources.get(id);
    if (wantedResources.has(id)) {
      plan.removed.push(removal);
      continue;
    }
    if (resource && !resource.metadata.deletionTimestamp && !removedNow.has(id)) plan.deleteResources.push({ kind: removal.kind, name });
    (resource ? plan.removing : plan.removed).push(removal);
    removedNow.add(id);
  }
  for (const [id, object] of resources) {
    if (!wantedResources.has(id) && !removedNow.has(id) && !object.metadata.deletionTimestamp && age(object, now) >= graceMs) {
      plan.deleteResources.push({ kind: kindOf(object), name: object.metadata.name });
    }
  }
  return plan;
}
