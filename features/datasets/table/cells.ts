import { RESERVED_FEEDBACK_FIELDS, type IoSchema } from '../../models/payload.js';
import { isInferenceRequest, toInferenceRequest, type Tensor } from '../../../infra/connectors/open-inference/tensors.js';
import type { DatasetRecord } from '../records.js';
import { scalar, typeOfSchema, type ColumnType } from './column-type.js';

// A dataset record as named cells: the invocation's own fields, one cell per
// input feature and per output (Open Inference tensors or the keys of a JSON
// object), the outputs of each explanation of the chain, and the last feedback's
// fields. Families keep their prefix (`input_`, `output_`, `explanation_<k>_`,
// `feedback_`), and the few columns about them are named so that no field can
// take their name: `feedback_count` is the one inside a family, so a feedback
// field `count` (refused in feedback schemas, but feedback without a schema
// may carry one) stays out of the table, kept in the records.

/** Where a column's values come from. */
export type Source = 'invocation' | 'input' | 'output' | 'explanation' | 'feedback';

export interface ColumnKey {
  name: string;
  source: Source;
  /** The feature, output or feedback property named, as the model or the schema names it. */
  field?: string;
  /** For explanation columns: the explainer's place in the chain, 1 for the first. */
  position?: number;
}

export interface Cell extends ColumnKey {
  value: unknown;
}

/** What the table needs of a model version: its schemas, and the explainers below it in chain order. */
export interface ModelShape {
  model_code: string;
  version: string;
  input_schema: IoSchema;
  output_schema: IoSchema;
  feedback_schema: Record<string, unknown> | null;
  explainers: Array<{ model_key: string; output_schema: IoSchema }>;
}

const text = scalar('string');
const time = scalar('timestamp');

/** The columns every table starts with, in order. */
export const INVOCATION_COLUMNS: Array<[keyof DatasetRecord, ColumnType]> = [
  ['invocation_id', text],
  ['session_id', text],
  ['order', scalar('int64')],
  ['model_code', text],
  ['model_version', text],
  ['type', text],
  ['request_type', text],
  ['status', text],
  ['error', text],
  ['created_at', time],
  ['started_at', time],
  ['completed_at', time],
  ['shadow_of', text],
];

/** The columns about a record's feedback, first of their family. */
const FEEDBACK_COUNT: ColumnKey = { name: 'feedback_count', source: 'feedback' };
const LAST_FEEDBACK_AT: ColumnKey = { name: 'last_feedback_at', source: 'feedback' };
export const FEEDBACK_COLUMNS: Array<[ColumnKey, ColumnType]> = [
  [FEEDBACK_COUNT, scalar('int64')],
  [LAST_FEEDBACK_AT, time],
];

/** Columns that are never null. */
export const REQUIRED_COLUMNS = new Set(['invocation_id', 'session_id', 'order', 'model_code', 'model_version', 'type', 'request_type', 'status', 'created_at', 'feedback_count']);

const inputKey = (field: string): ColumnKey => ({ name: `input_${field}`, source: 'input', field });
const outputKey = (field: string): ColumnKey => ({ name: `output_${field}`, source: 'output', field });
const feedbackKey = (field: string): ColumnKey => ({ name: `feedback_${field}`, source: 'feedback', field });
const explanationKey = (position: number, what: string, field?: string): ColumnKey => ({
  name: field === undefined ? `explanation_${position}_${what}` : `explanation_${position}_output_${field}`,
  source: 'explanation',
  position,
  ...(field !== undefined && { field }),
});

/** The columns a model's schemas declare, with the types they declare. */
export function declaredColumns(shape: ModelShape): Array<ColumnKey & { type: ColumnType }> {
  const declared = (key: (field: string) => ColumnKey, schema: unknown) => propertiesOf(schema).map(([field, property]) => ({ ...key(field), type: typeOfSchema(property) }));
  return [
    ...declared(inputKey, ioPayloadSchema(shape.input_schema)),
    ...declared(outputKey, ioPayloadSchema(shape.output_schema)),
    ...shape.explainers.flatMap((explainer, index) => [
      { ...explanationKey(index + 1, 'invocation_id'), type: text },
      { ...explanationKey(index + 1, 'status'), type: text },
      ...declared((field) => explanationKey(index + 1, 'output', field), ioPayloadSchema(explainer.output_schema)),
    ]),
    ...declared(feedbackKey, shape.feedback_schema).filter((column) => !RESERVED_FEEDBACK_FIELDS.has(column.field!)),
  ];
}

/** A record as cells; `shape` is its session's model (its explainers number the explanation columns). */
export function recordCells(record: DatasetRecord, shape: ModelShape | undefined): Cell[] {
  const cells: Cell[] = INVOCATION_COLUMNS.map(([name]) => ({ name, source: 'invocation', value: record[name] }));
  cells.push(...namedValues(inputValues(record.input)).map(([field, value]) => ({ ...inputKey(field), value })));
  cells.push(...namedValues(outputValues(record.output)).map(([field, value]) => ({ ...outputKey(field), value })));
  const positions = new Map((shape?.explainers ?? []).map((explainer, index) => [explainer.model_key, index + 1]));
  for (const explanation of record.explanations) {
    const position = positions.get(explanation.model_key);
    if (position === undefined) continue;
    cells.push({ ...explanationKey(position, 'invocation_id'), value: explanation.invocation_id });
    cells.push({ ...explanationKey(position, 'status'), value: explanation.status });
    cells.push(...namedValues(outputValues(explanation.output)).map(([field, value]) => ({ ...explanationKey(position, 'output', field), value })));
  }
  cells.push(...feedbackCells(record.feedback));
  return cells;
}

/** The count, the time of the last feedback, and its fields: a JSON object's keys, or the text itself as `feedback_body`. */
function feedbackCells(feedback: DatasetRecord['feedback']): Cell[] {
  const last = feedback.reduce<DatasetRecord['feedback'][number] | undefined>((latest, entry) => (!latest || entry.order > latest.order ? entry : latest), undefined);
  const cells: Cell[] = [{ ...FEEDBACK_COUNT, value: feedback.length }];
  if (!last) return cells;
  cells.push({ ...LAST_FEEDBACK_AT, value: last.created_at });
  const body = parseJson(last.body);
  const fields = isPlainObject(body.value) ? Object.entries(body.value) : [['body', last.body] as [string, unknown]];
  return [...cells, ...fields.filter(([field]) => !RESERVED_FEEDBACK_FIELDS.has(field)).map(([field, value]) => ({ ...feedbackKey(field), value }))];
}

/**
 * An input's features: the keys of a JSON object of features, or the tensors
 * the platform sends the model for any other body (an Open Inference request,
 * an array, text). A body the platform could not send gives none.
 */
function inputValues(body: string): Array<[string, unknown]> {
  const parsed = parseJson(body);
  if (isPlainObject(parsed.value) && !isInferenceRequest(parsed.value)) return Object.entries(parsed.value);
  try {
    return toInferenceRequest(body).inputs.map((tensor) => [tensor.name, tensorValue(tensor)]);
  } catch {
    return [];
  }
}

/** An answer's outputs: Open Inference output tensors, the keys of another JSON object, or `value` for anything else. */
function outputValues(response: string): Array<[string, unknown]> {
  if (response === '') return [];
  const parsed = parseJson(response);
  if (!parsed.ok) return [['value', response]];
  const answer = parsed.value;
  if (isPlainObject(answer) && Array.isArray(answer.outputs) && answer.outputs.every(isTensor)) return answer.outputs.map((tensor) => [tensor.name, tensorValue(tensor)]);
  if (isPlainObject(answer)) return Object.entries(answer);
  return [['value', answer]];
}

/** Feature names are kept as given; a repeated one keeps its last value. */
function namedValues(values: Array<[string, unknown]>): Array<[string, unknown]> {
  return [...new Map(values)];
}

/**
 * A tensor's value for one invocation: a batch of one loses its batch
 * dimension, so a scalar per row is a number and a vector a list; more
 * dimensions stay nested arrays.
 */
export function tensorValue(tensor: Pick<Tensor, 'shape' | 'data'>): unknown {
  const data = (tensor.data as unknown[]).flat(Infinity);
  const shape = tensor.shape[0] === 1 ? tensor.shape.slice(1) : tensor.shape;
  const count = shape.reduce((product, size) => product * size, 1);
  if (count !== data.length) return data;
  if (shape.length === 0) return data[0];
  return reshape(data, shape);
}

function reshape(data: unknown[], shape: number[]): unknown[] {
  const [size, ...rest] = shape;
  if (rest.length === 0) return data;
  const width = data.length / size!;
  return Array.from({ length: size! }, (_, i) => reshape(data.slice(i * width, (i + 1) * width), rest));
}

function isTensor(value: unknown): value is Tensor {
  return isPlainObject(value) && typeof value.name === 'string' && Array.isArray(value.shape) && Array.isArray(value.data);
}

/** The JSON Schema of a payload: `schema` of a platform schema ({type: json|file, schema}). */
function ioPayloadSchema(io: IoSchema | undefined): unknown {
  return io?.schema;
}

function propertiesOf(schema: unknown): Array<[string, unknown]> {
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return [];
  return Object.entries(schema.properties);
}

function parseJson(textValue: string): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: JSON.parse(textValue) };
  } catch {
    return { ok: false, value: undefined };
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
