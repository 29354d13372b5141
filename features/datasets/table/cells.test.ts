import { expect } from 'chai';
import type { DatasetRecord } from '../records.js';
import { RESERVED_FEEDBACK_FIELDS } from '../../models/payload.js';
import { declaredColumns, FEEDBACK_COLUMNS, recordCells, tensorValue, type Cell, type ModelShape } from './cells.js';

const IRIS_SHAPE: ModelShape = {
  model_code: 'iris',
  version: '1',
  input_schema: { type: 'json', schema: { type: 'object', properties: { sepal_length: { type: 'number' }, label: { type: ['string', 'null'] }, tags: { type: 'array', items: { type: 'string' } } } } },
  output_schema: { type: 'json' },
  feedback_schema: { type: 'object', properties: { correct: { type: 'boolean' }, score: { type: 'integer' } } },
  explainers: [
    { model_key: 'explainer:1', output_schema: { type: 'json' } },
    { model_key: 'second:1', output_schema: { type: 'json', schema: { type: 'object', properties: { note: { type: 'string' } } } } },
  ],
};

const OIP_ANSWER = JSON.stringify({
  model_name: 'iris',
  outputs: [
    { name: 'predicted_class', datatype: 'BYTES', shape: [1], data: ['setosa'] },
    { name: 'probabilities', datatype: 'FP64', shape: [1, 3], data: [0.9, 0.08, 0.02] },
    { name: 'grid', datatype: 'INT64', shape: [2, 2], data: [[1, 2], [3, 4]] },
  ],
});

function record(fields: Partial<DatasetRecord>): DatasetRecord {
  return {
    invocation_id: 'i0',
    session_id: 's1',
    order: 0,
    model_code: 'iris',
    model_version: '1',
    type: 'PREDICT',
    request_type: 'FEATURES',
    input: '{"sepal_length":5.1,"label":"a","tags":["x","y"]}',
    status: 'COMPLETED',
    output: OIP_ANSWER,
    error: null,
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: '2026-01-01T00:00:01.000Z',
    completed_at: '2026-01-01T00:00:02.000Z',
    shadow_of: null,
    explanations: [],
    feedback: [],
    ...fields,
  };
}

const byName = (cells: Cell[]) => Object.fromEntries(cells.map((cell) => [cell.name, cell.value]));

describe('dataset table cells of a record', () => {
  it('gives one cell per input feature of a JSON object and one per Open Inference output tensor', () => {
    const cells = byName(recordCells(record({}), IRIS_SHAPE));
    expect(cells).to.deep.include({
      invocation_id: 'i0',
      order: 0,
      created_at: '2026-01-01T00:00:00.000Z',
      input_sepal_length: 5.1,
      input_label: 'a',
      input_tags: ['x', 'y'],
      output_predicted_class: 'setosa',
      output_probabilities: [0.9, 0.08, 0.02],
      output_grid: [[1, 2], [3, 4]],
      feedback_count: 0,
    });
    expect(cells).to.not.have.property('last_feedback_at');
  });

  it('reads the inputs of other bodies as the tensors the model receives', () => {
    const request = JSON.stringify({ inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 2], data: [1, 2] }] });
    expect(byName(recordCells(record({ input: request }), IRIS_SHAPE))).to.include.keys('input_x').and.deep.include({ input_x: [1, 2] });
    expect(byName(recordCells(record({ input: '[[1, 2], [3, 4]]' }), IRIS_SHAPE))['input_input-0']).to.deep.equal([[1, 2], [3, 4]]);
    expect(byName(recordCells(record({ input: 'plain words' }), IRIS_SHAPE))['input_input-0']).to.equal('plain words');
    expect(Object.keys(byName(recordCells(record({ input: 'null' }), IRIS_SHAPE))).filter((name) => name.startsWith('input_'))).to.deep.equal([]);
  });

  it('reads other answers as the keys of their JSON object, or as one value', () => {
    expect(byName(recordCells(record({ output: '{"predictions":[0.91]}' }), IRIS_SHAPE))).to.deep.include({ output_predictions: [0.91] });
    expect(byName(recordCells(record({ output: 'not json' }), IRIS_SHAPE))).to.deep.include({ output_value: 'not json' });
    expect(Object.keys(byName(recordCells(record({ status: 'QUEUED', output: '' }), IRIS_SHAPE))).filter((name) => name.startsWith('output_'))).to.deep.equal([]);
  });

  it('numbers explanation columns by the explainer’s place in the model’s chain', () => {
    const explanation = (id: string, modelKey: string, output: string) => ({ invocation_id: id, order: 1, related_to: 'i0', model_key: modelKey, status: 'COMPLETED', output, error: null, created_at: '', completed_at: null, feedback: [] });
    const explained = record({ explanations: [explanation('e2', 'second:1', '{"note":"why"}'), explanation('e1', 'explainer:1', OIP_ANSWER), explanation('x', 'unknown:1', '{}')] });
    const cells = byName(recordCells(explained, IRIS_SHAPE));
    expect(cells).to.deep.include({
      explanation_1_invocation_id: 'e1',
      explanation_1_status: 'COMPLETED',
      explanation_1_output_predicted_class: 'setosa',
      explanation_2_invocation_id: 'e2',
      explanation_2_output_note: 'why',
    });
    expect(Object.values(cells)).to.not.include('x');
  });

  it('gives the last feedback’s fields, the count and the time; text that is not a JSON object as feedback_body', () => {
    const feedback = [
      { invocation_id: 'f2', order: 4, body: '{"correct":false,"score":2}', created_at: '2026-01-01T00:00:04.000Z' },
      { invocation_id: 'f1', order: 3, body: '{"correct":true,"score":9}', created_at: '2026-01-01T00:00:03.000Z' },
    ];
    expect(byName(recordCells(record({ feedback }), IRIS_SHAPE))).to.deep.include({ feedback_count: 2, last_feedback_at: '2026-01-01T00:00:04.000Z', feedback_correct: false, feedback_score: 2 });
    const text = [{ invocation_id: 'f1', order: 3, body: 'looks right', created_at: '2026-01-01T00:00:03.000Z' }];
    expect(byName(recordCells(record({ feedback: text }), IRIS_SHAPE))).to.deep.include({ feedback_count: 1, feedback_body: 'looks right' });
  });

  it('never lets a feedback field take a platform column: each one inside the feedback_ family is a reserved field', () => {
    const inFamily = FEEDBACK_COLUMNS.map(([key]) => key.name).filter((name) => name.startsWith('feedback_'));
    expect(inFamily.map((name) => name.slice('feedback_'.length)).filter((field) => !RESERVED_FEEDBACK_FIELDS.has(field))).to.deep.equal([]);
    const feedback = [{ invocation_id: 'f1', order: 3, body: '{"count":"many","correct":true}', created_at: '2026-01-01T00:00:03.000Z' }];
    const cells = recordCells(record({ feedback }), IRIS_SHAPE);
    expect(cells.filter((cell) => cell.name === 'feedback_count')).to.deep.equal([{ name: 'feedback_count', source: 'feedback', value: 1 }]);
    const shape = { ...IRIS_SHAPE, feedback_schema: { type: 'object', properties: { count: { type: 'string' } } } };
    expect(declaredColumns(shape).map((column) => column.name)).to.not.include('feedback_count');
  });

  it('declares the columns the schemas name, typed as the schemas say', () => {
    const declared = declaredColumns(IRIS_SHAPE).map((column) => [column.name, column.type]);
    expect(declared).to.deep.equal([
      ['input_sepal_length', { base: 'double', list: false }],
      ['input_label', { base: 'string', list: false }],
      ['input_tags', { base: 'string', list: true }],
      ['explanation_1_invocation_id', { base: 'string', list: false }],
      ['explanation_1_status', { base: 'string', list: false }],
      ['explanation_2_invocation_id', { base: 'string', list: false }],
      ['explanation_2_status', { base: 'string', list: false }],
      ['explanation_2_output_note', { base: 'string', list: false }],
      ['feedback_correct', { base: 'boolean', list: false }],
      ['feedback_score', { base: 'int64', list: false }],
    ]);
  });

  it('drops a batch of one from a tensor’s shape and keeps larger shapes nested', () => {
    expect(tensorValue({ shape: [1], data: [7] })).to.equal(7);
    expect(tensorValue({ shape: [3], data: [1, 2, 3] })).to.deep.equal([1, 2, 3]);
    expect(tensorValue({ shape: [1, 2, 2], data: [1, 2, 3, 4] })).to.deep.equal([[1, 2], [3, 4]]);
    expect(tensorValue({ shape: [2, 2], data: [1, 2, 3] })).to.deep.equal([1, 2, 3]);
  });
});
