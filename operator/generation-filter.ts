import type { KubeObject } from '../infra/kube/resources.js';

/**
 * Which watch events deserve a reconcile, as controller-runtime's
 * GenerationChangedPredicate decides: a new or deleted object, a spec change
 * (metadata.generation), a deletion request, or another object under the same
 * name. Status and metadata-only writes, the operator's own status and
 * finalizer patches among them, keep the generation and are skipped, so they
 * never re-run the network probes; periodic probes and retries requeue keys
 * by themselves.
 */
export class GenerationFilter {
  private readonly seen = new Map<string, string>();

  /** True when the change of `name` (undefined: deleted) needs a reconcile. */
  changed(name: string, object: KubeObject | undefined): boolean {
    if (!object) {
      this.seen.delete(name);
      return true;
    }
    const { uid, generation, deletionTimestamp } = object.metadata;
    const mark = JSON.stringify([uid, generation, deletionTimestamp ?? null]);
    const before = this.seen.get(name);
    this.seen.set(name, mark);
    return before !== mark;
  }
}
