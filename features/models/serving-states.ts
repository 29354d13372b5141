import type { Db } from '../../infra/db/database.js';
import { namespaceOpenTo, type NamespaceGrants } from '../../infra/connectors/kserve/access.js';
import type { ServingStateOf } from './catalog.service.js';
import type { ServingStatesStore } from './serving-states.store.js';

/**
 * A model's serving state as the private server last recorded it from its
 * watches, for a model a KServe registry recorded (`native_metadata.registry`):
 * undefined for another registry, a namespace the platform's operator
 * closed to the workspace since, or a service it has not seen (deleted, or
 * not watched yet).
 */
export function recordedServingState(db: Db, store: Pick<ServingStatesStore, 'get'>, grants: NamespaceGrants): ServingStateOf {
  return async (workspace, registry) => {
    const { platform, namespace, name, component } = registry;
    if (platform !== 'kserve' || typeof namespace !== 'string' || typeof name !== 'string' || !namespaceOpenTo(grants, workspace, namespace)) return undefined;
    const components = await store.get(db, namespace, name);
    return components?.[typeof component === 'string' ? component : 'predictor'];
  };
}
