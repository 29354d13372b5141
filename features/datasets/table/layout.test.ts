import { expect } from 'chai';
import type { Cell, ModelShape } from './cells.js';
import { TableLayout } from './layout.js';

const SHAPE: ModelShape = {
  model_code: 'm',
  version: '1',
  input_schema: { type: 'json', schema: { type: 'object', properties: { count: { type: 'integer' }, size: { type: 'number' } } } },
  output_schema: { type: 'json' },
  feedback_schema: null,
  explainers: [{ model_key: 'e:1', output_schema: { type: 'json' } }],
};

const invocation = (id: string): Cell[] => [
  { name: 'invocation_id', source: 'invocation', value: id },
  { name: 'order', source: 'invocation', value: 0 },
  { name: 'created_at', source: 'invocation', value: '2026-01-01T00:00:00.000Z' },
  { name: 'feedback_count', source: 'feedback', value: 0 },
  { name: 'last_feedback_at', source: 'feedback', value: '2026-01-01T00:00:03.000Z' },
];
const input = (field: string, value: unknown): Cell => ({ name: `input_${field}`, source: 'input', field, value });
const output = (field: string, value: unknown): Cell => ({ name: `output_${field}`, source: 'output', field, value });

describe('dataset table layout', () => {
  it('orders columns: the invocation’s, inputs, outputs, explanations by position, feedback', () => {
    const layout = new TableLayout([SHAPE]);
    layout.observe([{ name: 'feedback_ok', source: 'feedback', field: 'ok', value: true }, output('y', 1), input('extra', 'a')]);
    const names = layout.columns().map((column) => column.name);
    expect(names.slice(0, 3)).to.deep.equal(['invocation_id', 'session_id', 'order']);
    expect(names.slice(12)).to.deep.equal(['shadow_of', 'input_count', 'input_size', 'input_extra', 'output_y', 'explanation_1_invocation_id', 'explanation_1_status', 'feedback_count', 'last_feedback_at', 'feedback_ok']);
  });

  it('types declared columns by the schema and widens any column to hold every value met', () => {
    const layout = new TableLayout([SHAPE]);
    const rows = [
      [...invocation('a'), input('count', 3), output('n', 1), output('v', 'x'), output('mixed', 1), output('none', null)],
      [...invocation('b'), input('count', 4), output('n', 2.5), output('v', ['y', 'z']), output('mixed', 'one')],
    ];
    rows.forEach((cells) => layout.observe(cells));
    const types = Object.fromEntries(layout.columns().map((column) => [column.name, column.type]));
    expect(types).to.deep.include({ order: 'int64', created_at: 'timestamp', last_feedback_at: 'timestamp', input_count: 'int64', input_size: 'double', output_n: 'double', output_v: 'list<string>', output_mixed: 'json', output_none: 'string' });
    expect(rows.map((cells) => layout.row(cells))).to.deep.equal([
      { ...layout.row([]), invocation_id: 'a', order: 0, created_at: '2026-01-01T00:00:00.000Z', feedback_count: 0, last_feedback_at: '2026-01-01T00:00:03.000Z', input_count: 3, output_n: 1, output_v: ['x'], output_mixed: '1' },
      { ...layout.row([]), invocation_id: 'b', order: 0, created_at: '2026-01-01T00:00:00.000Z', feedback_count: 0, last_feedback_at: '2026-01-01T00:00:03.000Z', input_count: 4, output_n: 2.5, output_v: ['y', 'z'], output_mixed: '"one"' },
    ]);
  });

  it('marks the columns every record has as not nullable', () => {
    const nullable = Object.fromEntries(new TableLayout([]).columns().map((column) => [column.name, column.nullable]));
    expect(nullable).to.deep.include({ invocation_id: false, order: false, created_at: false, feedback_count: false, error: true, completed_at: true, shadow_of: true, last_feedback_at: true });
  });
});
