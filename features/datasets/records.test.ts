import { expect } from 'chai';
import type { InvocationRow } from '../invocations/store.js';
import { sessionRecords } from './records.js';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));

function row(order: number, fields: Partial<InvocationRow>): InvocationRow {
  return {
    id: `i${order}`,
    workspace_id: 1,
    session_id: 's1',
    user_id: 1,
    model_id: 1,
    order,
    type: 'PREDICT',
    request_type: 'FEATURES',
    body: `{"n":${order}}`,
    status: 'COMPLETED',
    response: `out${order}`,
    error: null,
    model_key: '',
    related_to: null,
    with_explanation: false,
    output_storage_key: null,
    priority: 5,
    attempts: 1,
    available_at: null,
    rerun_attempts: 0,
    callback_endpoint_id: null,
    callback_url: null,
    traceparent: null,
    shadow_of: null,
    lease_expires_at: null,
    created_at: at(order),
    started_at: at(order),
    completed_at: at(order),
    ...fields,
  };
}

describe('dataset records of a session', () => {
  const model = { model_code: 'iris', version: '1' };
  const rows = [
    row(0, { with_explanation: true }),
    row(1, { type: 'EXPLAIN', related_to: 'i0', model_key: 'explainer:1' }),
    row(2, { type: 'EXPLAIN', related_to: 'i1', model_key: 'second:1', status: 'ERROR', response: 'partial', error: 'boom' }),
    row(3, { type: 'DATA_SUBMISSION', request_type: 'FEEDBACK', related_to: 'i0', body: 'good' }),
    row(4, { type: 'DATA_SUBMISSION', request_type: 'FEEDBACK', related_to: 'i1', body: 'clear' }),
    row(5, { status: 'QUEUED', response: 'not yet', completed_at: null }),
    row(6, { type: 'EXPLAIN', related_to: null, model_key: 'explainer:1' }),
  ];

  it('gives one record per prediction or direct explanation, in session order', () => {
    expect(sessionRecords(model, rows).map((r) => [r.invocation_id, r.type])).to.deep.equal([
      ['i0', 'PREDICT'],
      ['i5', 'PREDICT'],
      ['i6', 'EXPLAIN'],
    ]);
  });

  it('attaches the whole explanation chain, each link with its own status and feedback', () => {
    const [first] = sessionRecords(model, rows);
    expect(first!.explanations.map((e) => [e.invocation_id, e.related_to, e.status, e.output, e.error])).to.deep.equal([
      ['i1', 'i0', 'COMPLETED', 'out1', null],
      ['i2', 'i1', 'ERROR', '', 'boom'],
    ]);
    expect(first!.explanations[0]!.feedback.map((f) => f.body)).to.deep.equal(['clear']);
    expect(first!.feedback).to.deep.equal([{ invocation_id: 'i3', order: 3, body: 'good', created_at: at(3).toISOString() }]);
  });

  it('shows what the API shows: no output before COMPLETED, ISO timestamps, the session model', () => {
    const queued = sessionRecords(model, rows)[1]!;
    expect(queued).to.deep.include({ output: '', status: 'QUEUED', completed_at: null, model_code: 'iris', model_version: '1', input: '{"n":5}', created_at: at(5).toISOString() });
  });
});
