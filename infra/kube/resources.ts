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

/** The spec of the custom resource: classes, init without credentials, and a reference to the Secret. */
export function specOf(desired: Desired): Record<string, unknown> {
  const secretRef = hasSecrets(desired) ? { secretRef: { name: secretName(nameOf(desired)) } } : {};
  if (desired.kind === 'deployment') {
    return { workspace: desired.workspace, deploymentKey: desired.key, registry: connector(desired.registry), serverProxy: connector(desired.serverProxy), ...secretRef };
  }
  return { workspace: desired.workspace, storageKey: desired.key, className: desired.className, init: { ...desired.init }, ...secretRef };
}

function withCredentialsVersion(meta: ObjectMeta, desired: Desired): ObjectMeta {
  if (!hasSecrets(desired) || !desired.credentialsVersion) return meta;
  return { ...meta, annotations: { ...meta.annotations, [ANNOTATIONS.credentialsVersion]: desired.credentialsVersion } };
}

/** The ModelDeployment or StorageConfig object the API applies (server-side apply, so only what it owns). */
export function customResource(desired: Desired, namespace: string): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: KINDS[desired.kind].kind,
    metadata: withCredentialsVersion(metadata(desired, nameOf(desired), namespace), desired),
    spec: specOf(desired),
  };
}

/** The Secret with the credentials, or null when the resource has none. */
export function credentialsSecret(desired: Desired, namespace: string): KubeObject | null {
  if (!hasSecrets(desired)) return null;
  const data = Object.fromEntries(Object.entries(desired.secrets).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata(desired, secretName(nameOf(desired)), namespace, desired.kind),
    type: 'Opaque',
    data,
  };
}
