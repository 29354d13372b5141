import { API_VERSION, KINDS, type ResourceKind } from './constants.js';

// REST paths of the namespaced collections didyma watches (client-node's informers take paths).

export const paths = {
  resources: (kind: ResourceKind, namespace: string) => `/apis/${API_VERSION}/namespaces/${namespace}/${KINDS[kind].plural}`,
  configMaps: (namespace: string) => `/api/v1/namespaces/${namespace}/configmaps`,
  secrets: (namespace: string) => `/api/v1/namespaces/${namespace}/secrets`,
};
