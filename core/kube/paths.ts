import { API_VERSION, KINDS, type ResourceKind } from './constants.js';

// REST paths of the objects didyma reads and writes, all namespaced.

const tail = (name?: string) => (name ? `/${encodeURIComponent(name)}` : '');

export const paths = {
  resource: (kind: ResourceKind, namespace: string, name?: string) => `/apis/${API_VERSION}/namespaces/${namespace}/${KINDS[kind].plural}${tail(name)}`,
  status: (kind: ResourceKind, namespace: string, name: string) => `${paths.resource(kind, namespace, name)}/status`,
  secret: (namespace: string, name?: string) => `/api/v1/namespaces/${namespace}/secrets${tail(name)}`,
  configMap: (namespace: string, name?: string) => `/api/v1/namespaces/${namespace}/configmaps${tail(name)}`,
  event: (namespace: string) => `/api/v1/namespaces/${namespace}/events`,
  lease: (namespace: string, name?: string) => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases${tail(name)}`,
};
