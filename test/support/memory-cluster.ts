import type { KubeApi } from '../../infra/kube/api.js';
import type { KubeConnection } from '../../infra/kube/connection.js';
import type { KubeObject } from '../../infra/kube/resources.js';

/** An error as client-node's ApiException carries it: the HTTP status as `code`. */
const refusal = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/**
 * A test double of the few Kubernetes API calls the reconciler makes
 * (server-side apply, create once, delete, list by label: what the chart's
 * RBAC lets the private server do, no get, and of Secrets only create),
 * keeping objects in memory: a finalizer holds a deleted object until
 * `finalize`, and `refuse` makes every write fail as an API server refusing
 * it would.
 */
export class MemoryCluster {
  readonly objects = new Map<string, KubeObject>();
  /** The HTTP status every write answers while set; `unreachable` answers nothing at all. */
  refuse: number | 'unreachable' | undefined;
  private created = 0;

  constructor(readonly namespace = 'ns', readonly credentialsNamespace = 'ns-credentials') {}

  connection(): KubeConnection {
    return { namespace: this.namespace, credentialsNamespace: this.credentialsNamespace, api: async () => this.api() };
  }

  find(kind: string, name: string): KubeObject | undefined {
    return [...this.objects.values()].find((object) => object.kind === kind && object.metadata.name === name);
  }

  /** Lets the operator's part happen: the object's finalizers are removed, and a deleted object goes. */
  finalize(kind: string, name: string): void {
    const object = this.find(kind, name);
    if (!object) return;
    object.metadata.finalizers = [];
    if (object.metadata.deletionTimestamp) this.objects.delete(this.id(object));
  }

  private id(object: KubeObject): string {
    return `${object.kind}/${object.metadata.namespace}/${object.metadata.name}`;
  }

  private write(): void {
    if (this.refuse === 'unreachable') throw new Error('connect ECONNREFUSED');
    if (this.refuse !== undefined) throw refusal(this.refuse);
  }

  private api(): KubeApi {
    const api = {
      apply: async (object: KubeObject) => {
        this.write();
        const existing = this.objects.get(this.id(object));
        const metadata = { ...existing?.metadata, ...structuredClone(object.metadata), creationTimestamp: existing?.metadata.creationTimestamp ?? new Date(Date.now() - ++this.created) };
        const applied = { ...existing, ...structuredClone(object), metadata };
        this.objects.set(this.id(object), applied);
        return structuredClone(applied);
      },
      createOnce: async (object: KubeObject) => {
        this.write();
        if (this.objects.has(this.id(object))) return;
        this.objects.set(this.id(object), { ...structuredClone(object), metadata: { ...structuredClone(object.metadata), creationTimestamp: new Date(Date.now() - ++this.created) } });
      },
      delete: async (ref: KubeObject) => {
        this.write();
        if (ref.kind === 'Secret') throw refusal(403);
        const object = this.objects.get(this.id(ref));
        if (!object) return;
        if (object.metadata.finalizers?.length) object.metadata.deletionTimestamp = new Date();
        else this.objects.delete(this.id(ref));
      },
      list: async (_apiVersion: string, kind: string, namespace: string, { labelSelector = '' }: { labelSelector?: string } = {}) => {
        if (this.refuse === 'unreachable') throw new Error('connect ECONNREFUSED');
        if (kind === 'Secret') throw refusal(403);
        const wanted = labelSelector.split(',').filter(Boolean).map((term) => term.split('='));
        const matches = (object: KubeObject) => wanted.every(([key, value]) => (value === undefined ? key! in (object.metadata.labels ?? {}) : object.metadata.labels?.[key!] === value));
        const items = [...this.objects.values()].filter((object) => object.kind === kind && object.metadata.namespace === namespace && matches(object));
        return { items: structuredClone(items) };
      },
    };
    return api as unknown as KubeApi;
  }
}
