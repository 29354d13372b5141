// Names shared by the API writer, the operator, the executors, the CRDs in
// crds/ and the Helm chart: one place, so they cannot drift apart.

export const GROUP = 'didyma.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export type ResourceKind = 'deployment' | 'storage';

export interface KindInfo {
  kind: 'ModelDeployment' | 'StorageConfig';
  plural: string;
  short: string;
}

export const KINDS: Readonly<Record<ResourceKind, KindInfo>> = {
  deployment: { kind: 'ModelDeployment', plural: 'modeldeployments', short: 'mdep' },
  storage: { kind: 'StorageConfig', plural: 'storageconfigs', short: 'stcfg' },
};

export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  /** The workspace, when its name is a valid label value (else a digest of it): `kubectl get mdep -l didyma.io/workspace=default`. */
  workspace: 'didyma.io/workspace',
  /** `deployment` or `storage`: which kind of resource a Secret holds credentials for. */
  kind: 'didyma.io/kind',
  /** On a credentials Secret: the name of the resource whose credentials it holds. */
  resource: 'didyma.io/resource',
  /** On each proxy ConfigMap, naming its set (DIDYMA_PROXY_CONFIGMAP): what executors and the operator watch by. */
  proxyConfig: 'didyma.io/proxy-config',
} as const;

export const ANNOTATIONS = {
  /** Exact workspace name and key, whatever the label and name had to shorten. */
  workspace: 'didyma.io/workspace',
  key: 'didyma.io/key',
} as const;

export const MANAGED_BY = 'didyma';

/** Put by the operator on every resource it has configured: deletion waits until the configuration is removed. */
export const FINALIZER = 'didyma.io/proxy-configuration';

/** Server-side apply field managers: the API owns spec and Secrets, the operator status and finalizers. */
export const FIELD_MANAGERS = { api: 'didyma-api', operator: 'didyma-operator' } as const;
