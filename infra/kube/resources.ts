import type { V1ObjectMeta } from '@kubernetes/client-node';
import { ANNOTATIONS, API_VERSION, KINDS, LABELS, MANAGED_BY, type ResourceKind } from './constants.js';
import type { Connector, Desired } from './desired.js';
import { resourceName, secretName, workspaceLabel } from './names.js';

/** A Kubernetes object as client-node reads and writes it, always named. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** Timestamps are Dates when client-node knows the type, the API's strings in custom resources it lists or watches. */
export type ObjectMeta = V1ObjectMeta & { name: string };

/** Type, namespace and name: what KubernetesObjectApi needs to address an object. */
export const objectRef = (apiVersion: string, kind: string, namespace: string, name: string): KubeObject => ({ apiVersion, kind, metadata: { name, namespace } });
export const resourceRef = (kind: ResourceKind, namespace: string, name: string) => objectRef(API_VERSION, KINDS[kind].kind, namespace, name);
export const secretRef = (namespace: string, name: string) => objectRef('v1', 'Secret', namespace, name);

export const nameOf = (desired: Pick<Desired, 'kind' | 'workspace' | 'key'>) => resourceName(desired.kind, desired.workspace, desired.key);

function metadata(desired: Desired, name: string, namespace: string, kindLabel?: ResourceKind): ObjectMeta {
  return {
    name,
    namespace,
    labels: {
      [LABELS.managedBy]: MANAGED_BY,
      [LABELS.workspace]: workspaceLabel(desired.workspace),
      ...(kindLabel ? { [LABELS.kind]: kindLabel } : {}),
    },
    annotations: { [ANNOTATIONS.workspace]: desired.workspace, [ANNOTATIONS.key]: desired.key },
  };
}

const hasSecrets = (desired: Desired) => Object.keys(desired.secrets).length > 0;
const connector = (c: Connector): Connector => ({ className: c.className, init: { ...c.init } });

/** The name of the Secret of the resource's credentials as they are now, or undefined when it has none. */
export function credentialsSecretName(desired: Desired): string | undefined {
  if (!hasSecrets(desired)) return undefined;
  if (!desired.credentialsVersion) throw new Error(`The credentials of ${KINDS[desired.kind].kind} "${desired.key}" have no version to name their Secret by.`);
  return secretName(nameOf(desired), desired.credentialsVersion);
}

/** The spec of the custom resource: classes, init without credentials, and a reference to the Secret. */
export function specOf(desired: Desired): Record<string, unknown> {
  const name = credentialsSecretName(desired);
  const secretRef = name ? { secretRef: { name } } : {};
  if (desired.kind === 'deployment') {
    return { workspace: desired.workspace, deploymentKey: desired.key, registry: connector(desired.registry), serverProxy: connector(desired.serverProxy), ...secretRef };
  }
  return { workspace: desired.workspace, storageKey: desired.key, className: desired.className, init: { ...desired.init }, ...secretRef };
}

/** The ModelDeployment or StorageConfig object the API applies (server-side apply, so only what it owns). */
export function customResource(desired: Desired, namespace: string): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: KINDS[desired.kind].kind,
    metadata: metadata(desired, nameOf(desired), namespace),
    spec: specOf(desired),
  };
}

/**
 * The Secret of the credentials' current version, or null when the resource
 * has none: immutable, since a new version is a new Secret, and labelled with
 * its resource so that the operator finds the versions it supersedes.
 */
export function credentialsSecret(desired: Desired, namespace: string): KubeObject | null {
  const name = credentialsSecretName(desired);
  if (!name) return null;
  const data = Object.fromEntries(Object.entries(desired.secrets).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]));
  const meta = metadata(desired, name, namespace, desired.kind);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...meta, labels: { ...meta.labels, [LABELS.resource]: nameOf(desired) } },
    type: 'Opaque',
    immutable: true,
    data,
  };
}
