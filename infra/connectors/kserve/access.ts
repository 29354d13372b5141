import type { InferenceService } from './inference-service.js';

/** Which namespaces the platform's operator opened to which workspaces (DIDYMA_KSERVE_NAMESPACES). */
export type NamespaceGrants = ReadonlyMap<string, readonly string[] | '*'>;

/** Whether `workspace` may discover and call the InferenceServices of `namespace`. */
export function namespaceOpenTo(grants: NamespaceGrants, workspace: string, namespace: string): boolean {
  const granted = grants.get(namespace);
  return granted === '*' || (granted !== undefined && granted.includes(workspace));
}

/**
 * The InferenceServices a process may read, in Kubernetes mode only: the
 * namespaces opened to each workspace, the cached objects of the process's
 * shared informers (the call path), and a listing through the API (discovery,
 * which honours a label selector).
 */
export interface KServeAccess {
  readonly grants: NamespaceGrants;
  /** The service as the namespace's shared informer last saw it (the first call starts the watch and waits for its list). */
  cached(namespace: string, name: string): Promise<InferenceService | undefined>;
  /** The services of `namespace` the API lists with `labelSelector`. */
  list(namespace: string, labelSelector?: string): Promise<InferenceService[]>;
}
