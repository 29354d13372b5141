import { expect } from 'chai';
import type { InvocationView, Thread } from '../invocations/threads.js';
import { sessionBody, type SessionPage } from './session-invocations.js';

const PROBABILITIES = JSON.stringify({ outputs: [{ name: 'probabilities', datatype: 'FP64', shape: [1, 3], data: [0.9, 0.07, 0.03], parameters: { classes: 'setosa,versicolor,virginica' } }] });

function prediction(id: string, order: number, status: InvocationView['status'], times: Partial<InvocationView> = {}): Thread {
  const invocation = {
    id,
    order,
    type: 'PREDICT',
    request: { session_id: 's', request_type: 'FEATURES', body: JSON.stringify({ setosa: 0.5, versicolor: 0.5 }) },
    status,
    response: status === 'COMPLETED' ? PROBABILITIES : '',
    model_key: 'iris:1',
    related_to: null,
    error: null,
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: null,
    completed_at: null,
    ...times,
  } as InvocationView;
  return { invocation, explanations: [], feedback: [] };
}

const page = (threads: Thread[], olderCount: number): SessionPage => ({
  model: { code: 'iris', version: '1', name: 'Iris' },
  sessionId: 's',
  kind: 'PREDICT',
  threads,
  total: 12,
  olderCount,
  paged: olderCount > 0,
  complete: true,
});

const headings = (text: string) => [...text.matchAll(/<h2 id="[^"]+">([^<]+)</g)].map((m) => m[1]!.trim());

describe("dashboard session page", () => {
  const done = prediction('b', 14, 'COMPLETED', { started_at: '2026-01-01T00:00:00.250Z', completed_at: '2026-01-01T00:00:01.750Z' });
  const queued = prediction('a', 12, 'QUEUED');

  it('numbers predictions by their place in the session, the oldest being 1, whatever their order among all invocations', () => {
    expect(headings(sessionBody(page([done, queued], 0)).text)).to.deep.equal(['Prediction 2', 'Prediction 1']);
    expect(headings(sessionBody(page([done, queued], 10)).text)).to.deep.equal(['Prediction 12', 'Prediction 11']);
    expect(sessionBody(page([done], 0)).text).not.to.contain('#14');
  });

  it("shows each prediction's queue wait and run time, a dash for what has not happened yet", () => {
    const text = sessionBody(page([done, queued], 0)).text;
    expect(text).to.contain('<dt>Queue wait</dt><dd>250 ms</dd><dt>Run time</dt><dd>1.5 s</dd>');
    expect(text).to.contain('<dt>Queue wait</dt><dd>—</dd><dt>Run time</dt><dd>—</dd>').and.not.contain('NaN');
  });

  it('draws the probabilities of a result as a bar chart, and never charts what was sent', () => {
    const text = sessionBody(page([done], 0)).text;
    expect(text.match(/<svg /g)).to.have.length(1);
    expect(text).to.contain('aria-label="probabilities: setosa 0.9, versicolor 0.07, virginica 0.03."');
  });
});
