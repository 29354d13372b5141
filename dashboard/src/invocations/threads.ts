import type { presentInvocation } from '../../../features/invocations/present.js';

/** An invocation as the public API shows it. */
export type InvocationView = ReturnType<typeof presentInvocation>;

export interface Explanation {
  invocation: InvocationView;
  feedback: InvocationView[];
}

/** An invocation of the page with what followed it: its explanations, explainer after explainer, and the feedback on each. */
export interface Thread {
  invocation: InvocationView;
  explanations: Explanation[];
  feedback: InvocationView[];
}

/** What one request for related invocations answered: a page of them, and whether more follow. */
export interface RelatedPage {
  items: InvocationView[];
  next?: unknown;
}

/** The API takes this many ids in one `related_to`. */
export const RELATED_IDS_PER_REQUEST = 100;
/** Explainer chains are a few links long; this bounds the reads of a page however a session was built. */
const MAX_CHAIN = 10;

/**
 * The explanations and feedback of `ids`, read wave after wave down the
 * explanation chains (an explanation's own explanation and feedback relate to
 * it); `complete` is false when a request had more rows than one page.
 */
export async function relatedInvocations(ids: string[], read: (relatedTo: string[]) => Promise<RelatedPage>): Promise<{ items: InvocationView[]; complete: boolean }> {
  const items: InvocationView[] = [];
  let complete = true;
  let wave = ids;
  for (let depth = 0; wave.length > 0 && depth < MAX_CHAIN; depth++) {
    const found: InvocationView[] = [];
    for (let i = 0; i < wave.length; i += RELATED_IDS_PER_REQUEST) {
      const page = await read(wave.slice(i, i + RELATED_IDS_PER_REQUEST));
      found.push(...page.items);
      if (page.next) complete = false;
    }
    items.push(...found);
    wave = found.filter((invocation) => invocation.type === 'EXPLAIN').map((invocation) => invocation.id);
  }
  return { items, complete: complete && wave.length === 0 };
}

/** Each invocation of the page with its explanation chain and feedback, all in session order. */
export function threadsOf(roots: InvocationView[], related: InvocationView[]): Thread[] {
  const byTarget = new Map<string, InvocationView[]>();
  for (const invocation of related) {
    if (invocation.related_to) byTarget.set(invocation.related_to, [...(byTarget.get(invocation.related_to) ?? []), invocation]);
  }
  const of = (id: string, type: InvocationView['type']) => (byTarget.get(id) ?? []).filter((i) => i.type === type).sort(byOrder);
  return roots.map((root) => {
    const chain: InvocationView[] = [];
    const pending = of(root.id, 'EXPLAIN');
    while (pending.length > 0) {
      const next = pending.shift()!;
      chain.push(next);
      pending.push(...of(next.id, 'EXPLAIN'));
    }
    return {
      invocation: root,
      explanations: chain.sort(byOrder).map((e) => ({ invocation: e, feedback: of(e.id, 'DATA_SUBMISSION') })),
      feedback: of(root.id, 'DATA_SUBMISSION'),
    };
  });
}

const byOrder = (a: InvocationView, b: InvocationView) => a.order - b.order;
