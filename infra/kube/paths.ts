import { API_VERSION, KINDS, type ResourceKind } from './constants.js';

/** A namespaced collection didyma list+watches: its type, REST path (client-node's informers take paths) and selectors. */
export interface Collection {
  apiVersion: string;
  kind: string;
  namespace: string;
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export const collections = {
  resources: (kind: ResourceKind, namespace: string): Collection => ({ apiVersion: API_VERSION, kind: KINDS[kind].kind, namespace, path: `/apis/${API_VERSION}/namespaces/${namespace}/${KINDS[kind].plural}` }),
  configMaps: (namespace: string, labelSelector?: string, fieldSelector?: string): Collection => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace, path: `/api/v1/namespaces/${namespace}/configmaps`, labelSelector, fieldSelector }),
  secrets: (namespace: string): Collection => ({ apiVersion: 'v1', kind: 'Secret', namespace, path: `/api/v1/namespaces/${namespace}/secrets` }),
  /** KServe's, read by the KServe connectors: one watch per namespace, whoever asks. */
  inferenceServices: (namespace: string): Collection => ({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', namespace, path: `/apis/serving.kserve.io/v1beta1/namespaces/${namespace}/inferenceservices` }),
};

/** What tells two collections apart: equal keys are one watch. */
export const collectionKey = (c: Collection) => JSON.stringify([c.path, c.labelSelector ?? '', c.fieldSelector ?? '']);
