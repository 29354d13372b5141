// An MLflow model signature (the `signature` of a logged model's MLmodel file)
// as the platform's input and output schemas: JSON Schemas of the bodies the
// MLflow server proxy sends on, and of the scoring server's `predictions`.

import type { RegistrySchema, RegistrySchemas } from '../types.js';

type JsonSchema = Record<string, unknown>;

/** The JSON texts under `signature` in an MLmodel file. */
export interface MlflowSignature {
  inputs?: string | null;
  outputs?: string | null;
}

type SignatureSchema = RegistrySchema;

interface ColSpec {
  type: unknown;
  name?: string;
  required?: boolean;
  items?: unknown;
  properties?: unknown;
  values?: unknown;
}

interface TensorSpec {
  type: 'tensor';
  name?: string;
  'tensor-spec': { dtype: string; shape: Array<number> };
}

type Spec = ColSpec | TensorSpec;

/** Thrown when a signature is not what MLflow writes. */
export class SignatureError extends Error {}

const COLUMN_TYPES: Record<string, JsonSchema> = {
  boolean: { type: 'boolean' },
  integer: { type: 'integer' },
  long: { type: 'integer' },
  float: { type: 'number' },
  double: { type: 'number' },
  string: { type: 'string' },
  // JSON carries binary columns as base64 text and datetimes as ISO 8601 text.
  binary: { type: 'string' },
  datetime: { type: 'string' },
  any: {},
};

/** The input and output schemas a signature describes; a side the signature leaves out stays undefined. */
export function signatureSchemas(signature: MlflowSignature): RegistrySchemas {
  const inputs = specsOf(signature.inputs, 'inputs');
  const outputs = specsOf(signature.outputs, 'outputs');
  return {
    ...(inputs && { input: inputSchema(inputs) }),
    ...(outputs && { output: outputSchema(outputs) }),
  };
}

function specsOf(text: string | null | undefined, side: string): Spec[] | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  let specs: unknown;
  try {
    specs = JSON.parse(text);
  } catch {
    throw new SignatureError(`the signature's ${side} are not JSON`);
  }
  if (!Array.isArray(specs) || specs.length === 0 || !specs.every((spec) => typeof spec === 'object' && spec !== null)) {
    throw new SignatureError(`the signature's ${side} are not a list of column or tensor specs`);
  }
  return specs as Spec[];
}

const isTensor = (spec: Spec): spec is TensorSpec => spec.type === 'tensor';

/** The bodies the MLflow proxy turns into a scoring request for this signature. */
function inputSchema(specs: Spec[]): SignatureSchema {
  if (specs.every(isTensor)) return { type: 'json', description: `From the MLflow signature: ${describeTensors(specs)}.`, schema: tensorsBody(specs) };
  if (specs.some(isTensor)) throw new SignatureError('the signature mixes columns and tensors');
  const columns = specs as ColSpec[];
  const fields = columns.map((column, index) => ({ name: column.name ?? String(index), type: typeName(column), required: column.required !== false }));
  const description = `From the MLflow signature: columns ${fields.map((f) => `${f.name} (${f.type}${f.required ? '' : ', optional'})`).join(', ')}.`;
  return { type: 'json', description, schema: columnsBody(columns), fields };
}

/** What the scoring server answers: `{predictions}`, records for columns, the tensor (or tensors by name) otherwise. */
function outputSchema(specs: Spec[]): SignatureSchema {
  const predictions = specs.every(isTensor) ? tensorsBody(specs) : { type: 'array', items: specs.some(isTensor) ? {} : recordOf(specs as ColSpec[]) };
  const what = specs.every(isTensor) ? describeTensors(specs) : `columns ${(specs as ColSpec[]).map((c, i) => `${c.name ?? i} (${typeName(c)})`).join(', ')}`;
  return {
    type: 'json',
    description: `From the MLflow signature: the scoring server's predictions, ${what}.`,
    schema: { type: 'object', required: ['predictions'], properties: { predictions: predictions } },
  };
}

/**
 * Named columns: one record, a list of records, or a split frame
 * `{columns, data}`; unnamed columns: one row or a list of rows.
 */
function columnsBody(columns: ColSpec[]): JsonSchema {
  if (columns.every((column) => typeof column.name === 'string')) {
    const record = recordOf(columns);
    const names = columns.map((column) => column.name as string);
    const splitFrame = {
      type: 'object',
      required: ['columns', 'data'],
      properties: { columns: { type: 'array', items: { enum: names }, allOf: requiredNames(columns).map((name) => ({ contains: { const: name } })) }, data: { type: 'array', items: { type: 'array' } }, index: { type: 'array' } },
      additionalProperties: false,
    };
    return { anyOf: [splitFrame, record, { type: 'array', minItems: 1, items: record }] };
  }
  const row = { type: 'array', prefixItems: columns.map(columnValue), minItems: columns.filter((c) => c.required !== false).length, maxItems: columns.length };
  return { anyOf: [row, { type: 'array', minItems: 1, items: row }] };
}

function requiredNames(columns: ColSpec[]): string[] {
  return columns.filter((column) => column.required !== false && column.name !== undefined).map((column) => column.name as string);
}

function recordOf(columns: ColSpec[]): JsonSchema {
  const required = requiredNames(columns);
  const properties = Object.fromEntries(columns.filter((column) => column.name !== undefined).map((column) => [column.name as string, columnValue(column)]));
  return { type: 'object', required, properties };
}

/** An optional column's value may also be null: that is how a split frame leaves it out. */
function columnValue(column: ColSpec): JsonSchema {
  const value = typeSchema(column);
  return column.required === false ? { anyOf: [value, { type: 'null' }] } : value;
}

function typeSchema(spec: ColSpec): JsonSchema {
  const type = String(spec.type).toLowerCase();
  if (type === 'array') return { type: 'array', items: typeSchema(asSpec(spec.items, 'array items')) };
  if (type === 'map') return { type: 'object', additionalProperties: typeSchema(asSpec(spec.values, 'map values')) };
  if (type === 'object') {
    const properties = Object.entries(asRecord(spec.properties, 'object properties')).map(([name, value]) => ({ ...asSpec(value, `property ${name}`), name }));
    return recordOf(properties);
  }
  const known = COLUMN_TYPES[type];
  if (!known) throw new SignatureError(`the signature has a column of unknown type "${type}"`);
  return known;
}

function typeName(spec: ColSpec): string {
  const type = String(spec.type).toLowerCase();
  if (type === 'array') return `array of ${typeName(asSpec(spec.items, 'array items'))}`;
  if (type === 'map') return `map of ${typeName(asSpec(spec.values, 'map values'))}`;
  return type;
}

/** One unnamed tensor: the nested arrays themselves; named tensors: an object of them. */
function tensorsBody(tensors: TensorSpec[]): JsonSchema {
  const [only] = tensors;
  if (tensors.length === 1 && only && only.name === undefined) return tensorSchema(only);
  const properties = Object.fromEntries(tensors.map((tensor, index) => [tensor.name ?? String(index), tensorSchema(tensor)]));
  return { type: 'object', required: Object.keys(properties), properties };
}

/** Nested arrays, one level per dimension; -1 is a dimension of any length. */
function tensorSchema(tensor: TensorSpec): JsonSchema {
  const spec = tensor['tensor-spec'];
  if (typeof spec !== 'object' || spec === null || !Array.isArray(spec.shape) || typeof spec.dtype !== 'string') {
    throw new SignatureError('the signature has a tensor without dtype and shape');
  }
  let schema = dtypeSchema(spec.dtype);
  for (const size of [...spec.shape].reverse()) {
    if (!Number.isInteger(size)) throw new SignatureError('the signature has a tensor shape that is not a list of integers');
    schema = size < 0 ? { type: 'array', items: schema } : { type: 'array', items: schema, minItems: size, maxItems: size };
  }
  return schema;
}

function dtypeSchema(dtype: string): JsonSchema {
  if (/^float(16|32|64|128)?$/.test(dtype)) return { type: 'number' };
  if (/^u?int(8|16|32|64)?$/.test(dtype)) return { type: 'integer' };
  if (dtype === 'bool') return { type: 'boolean' };
  if (dtype === 'str' || dtype === 'bytes' || dtype.startsWith('datetime64')) return { type: 'string' };
  if (dtype === 'object') return {};
  throw new SignatureError(`the signature has a tensor of unknown dtype "${dtype}"`);
}

function describeTensors(tensors: TensorSpec[]): string {
  return tensors
    .map((tensor) => {
      const spec = tensor['tensor-spec'];
      const shape = Array.isArray(spec?.shape) ? spec.shape.map((size) => (size < 0 ? 'any' : String(size))).join(' × ') : '?';
      return `${tensor.name ? `${tensor.name}: ` : ''}tensor of ${spec?.dtype ?? '?'}, shape ${shape}`;
    })
    .join('; ');
}

function asSpec(value: unknown, what: string): ColSpec {
  if (typeof value !== 'object' || value === null || !('type' in value)) throw new SignatureError(`the signature has ${what} without a type`);
  return value as ColSpec;
}

function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SignatureError(`the signature has ${what} that are not an object`);
  return value as Record<string, unknown>;
}
