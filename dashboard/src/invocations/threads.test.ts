import { expect } from 'chai';
import { RELATED_IDS_PER_REQUEST, relatedInvocations, threadsOf, type InvocationView } from './threads.js';

let order = 0;
function invocation(type: InvocationView['type'], relatedTo: string | null = null): InvocationView {
  order += 1;
  return {
    id: `inv-${order}`,
    order,
    type,
    request: { session_id: 's', request_type: type === 'DATA_SUBMISSION' ? 'FEEDBACK' : 'FEATURES', body: '{}' },
    status: 'COMPLETED',
    response: '',
    model_key: '',
    related_to: relatedTo,
    error: null,
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: null,
    completed_at: null,
  } as InvocationView;
}

describe('dashboard invocation threads', () => {
  const predict = invocation('PREDICT');
  const other = invocation('PREDICT');
  const explanation = invocation('EXPLAIN', predict.id);
  const second = invocation('EXPLAIN', explanation.id);
  const onPredict = invocation('DATA_SUBMISSION', predict.id);
  const onExplanation = invocation('DATA_SUBMISSION', explanation.id);
  const all = [predict, other, explanation, second, onPredict, onExplanation];
  /** Answers `related_to` as the API does, from the invocations above. */
  const api = (calls: string[][]) => async (ids: string[]) => {
    calls.push(ids);
    return { items: all.filter((i) => i.related_to !== null && ids.includes(i.related_to ?? '')).reverse() };
  };

  it('reads the explanations and feedback of a page wave after wave down the chain', async () => {
    const calls: string[][] = [];
    const { items, complete } = await relatedInvocations([predict.id, other.id], api(calls));
    expect(calls).to.deep.equal([[predict.id, other.id], [explanation.id], [second.id]]);
    expect(items.map((i) => i.id)).to.have.members([explanation.id, onPredict.id, second.id, onExplanation.id]);
    expect(complete).to.equal(true);
  });

  it('asks for at most the ids one request takes, and says when a page left rows out', async () => {
    const ids = Array.from({ length: RELATED_IDS_PER_REQUEST + 1 }, (_, i) => `id-${i}`);
    const sizes: number[] = [];
    const { complete } = await relatedInvocations(ids, async (batch) => {
      sizes.push(batch.length);
      return { items: [], next: sizes.length === 1 ? { at: 'x', id: 1 } : undefined };
    });
    expect(sizes).to.deep.equal([RELATED_IDS_PER_REQUEST, 1]);
    expect(complete).to.equal(false);
  });

  it('hangs each explanation chain and the feedback on each link under the invocation it follows', () => {
    const [first, plain] = threadsOf([predict, other], [onExplanation, second, onPredict, explanation]);
    expect(first!.invocation.id).to.equal(predict.id);
    expect(first!.explanations.map((e) => [e.invocation.id, e.feedback.map((f) => f.id)])).to.deep.equal([
      [explanation.id, [onExplanation.id]],
      [second.id, []],
    ]);
    expect(first!.feedback.map((f) => f.id)).to.deep.equal([onPredict.id]);
    expect(plain).to.deep.equal({ invocation: other, explanations: [], feedback: [] });
  });
});
