// An Open Inference Protocol (v2) model's metadata (`GET /v2/models/{name}`:
// inputs and outputs, each a name, a datatype and a shape) as the platform's
// input and output schemas: JSON Schemas of the bodies an Open Inference
// proxy turns into an inference request (tensors.ts), and of its answer.

import type { RegistrySchema, RegistrySchemas } from '../types.js';

type JsonSchema = Record<string, unknown>;

/** One tensor of the metadata; -1 in a shape is a dimension of any length. */
export interface TensorMetadata {
  name: string;
  datatype: string;
  shape: number[];
}

/**
 * Bounds on what is described, so that a derived schema stays inside the
 * platform's limits on a tenant's schema (64 KiB, 32 levels): a side with
 * more tensors, longer names or more dimensions is left to the registration;
 * the dimensions of a tensor of rank past `rank` are not checked one by one.
 */
export const METADATA_BOUNDS = { tensors: 32, nameLength: 64, dimensions: 32, rank: 8 } as const;

// 64-bit bounds are as near as a JSON number (a double) gets to them.
const INTEGER_RANGES: Record<string, [number, number]> = {
  UINT8: [0, 2 ** 8 - 1],
  UINT16: [0, 2 ** 16 - 1],
  UINT32: [0, 2 ** 32 - 1],
  UINT64: [0, 2 ** 64],
  INT8: [-(2 ** 7), 2 ** 7 - 1],
  INT16: [-(2 ** 15), 2 ** 15 - 1],
  INT32: [-(2 ** 31), 2 ** 31 - 1],
  INT64: [-(2 ** 63), 2 ** 63],
};

// The largest finite values: a JSON number past them is no value of the type.
const FLOAT_MAXIMA: Record<string, number> = { FP16: 65_504, FP32: 3.4028234663852886e38 };

/** The JSON Schema of one element of a tensor of `datatype`; an unknown datatype's elements are unchecked. */
export function elementSchema(datatype: string): JsonSchema {
  if (datatype === 'BOOL') return { type: 'boolean' };
  if (datatype === 'BYTES') return { type: 'string' };
  const range = INTEGER_RANGES[datatype];
  if (range) return { type: 'integer', minimum: range[0], maximum: range[1] };
  if (datatype in FLOAT_MAXIMA) return { type: 'number', minimum: -FLOAT_MAXIMA[datatype]!, maximum: FLOAT_MAXIMA[datatype]! };
  if (datatype === 'FP64') return { type: 'number' };
  return {};
}

/** The metadata's tensors of one side, when it has some the platform can describe; undefined otherwise. */
export function tensorsOf(value: unknown): TensorMetadata[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > METADATA_BOUNDS.tensors) return undefined;
  const valid = value.every(
    (t) =>
      typeof t === 'object' &&
      t !== null &&
      typeof t.name === 'string' &&
      t.name.length > 0 &&
      t.name.length <= METADATA_BOUNDS.nameLength &&
      typeof t.datatype === 'string' &&
      Array.isArray(t.shape) &&
      t.shape.length <= METADATA_BOUNDS.dimensions &&
      t.shape.every((size: unknown) => Number.isSafeInteger(size) && (size as number) >= -1),
  );
  return valid ? (value as TensorMetadata[]) : undefined;
}

/** The schemas a model's metadata describes; a side without tensors (or past METADATA_BOUNDS) stays undefined. */
export function metadataSchemas(metadata: { inputs?: unknown; outputs?: unknown }): RegistrySchemas {
  const inputs = tensorsOf(metadata.inputs);
  const outputs = tensorsOf(metadata.outputs);
  return {
    ...(inputs && { input: inputSchema(inputs) }),
    ...(outputs && { output: outputSchema(outputs) }),
  };
}

/**
 * Every body the proxy turns into a request these inputs accept: an Open
 * Inference request of them; a record of features named after them (or a
 * batch of records), when each is of rank 1 or 2; one row or rows, when the
 * only input is of rank 2; one value, when it is of rank 1.
 */
function inputSchema(inputs: TensorMetadata[]): RegistrySchema {
  const record = recordOf(inputs);
  const forms = [inferenceRequest(inputs), ...(record ? recordForms(inputs) : []), ...singleInputForms(inputs)];
  return {
    type: 'json',
    description: `From the model's Open Inference metadata: ${describeTensors(inputs)}.`,
    schema: { ...(record && { $defs: { record } }), anyOf: forms },
    fields: inputs.map((t) => ({ name: t.name, type: t.datatype, required: true })),
  };
}

/** What the proxy stores: the server's inference response, its outputs among those declared. */
function outputSchema(outputs: TensorMetadata[]): RegistrySchema {
  return {
    type: 'json',
    description: `From the model's Open Inference metadata: an inference response whose outputs are ${describeTensors(outputs)}.`,
    schema: { type: 'object', required: ['outputs'], properties: { model_name: { type: 'string' }, model_version: { type: 'string' }, id: { type: 'string' }, parameters: { type: 'object' }, outputs: { type: 'array', items: { anyOf: outputs.map(tensorObject) } } } },
  };
}

/** `{inputs: [...]}`, each declared input once, each as declared. */
function inferenceRequest(inputs: TensorMetadata[]): JsonSchema {
  const tensors = {
    type: 'array',
    minItems: inputs.length,
    maxItems: inputs.length,
    items: { anyOf: inputs.map(tensorObject) },
    allOf: inputs.map((t) => ({ contains: { type: 'object', required: ['name'], properties: { name: { const: t.name } } } })),
  };
  return { type: 'object', required: ['inputs'], properties: { id: { type: 'string' }, parameters: { type: 'object' }, outputs: { type: 'array' }, inputs: tensors } };
}

/** One tensor of a request or response: its name, datatype and a shape of its rank; its data flat or nested. */
function tensorObject(tensor: TensorMetadata): JsonSchema {
  const rank = tensor.shape.length;
  const dimensions = tensor.shape.map((size) => (size < 0 ? { type: 'integer', minimum: 0 } : { const: size }));
  const shape = rank > METADATA_BOUNDS.rank ? { minItems: rank, maxItems: rank } : { prefixItems: dimensions, minItems: rank, maxItems: rank };
  const element = elementSchema(tensor.datatype);
  return {
    type: 'object',
    required: ['name', 'datatype', 'shape', 'data'],
    properties: {
      name: { const: tensor.name },
      datatype: { const: tensor.datatype },
      shape: { type: 'array', items: { type: 'integer', minimum: -1 }, ...shape },
      data: { type: 'array', items: { anyOf: [element, { type: 'array' }] } },
      parameters: { type: 'object' },
    },
  };
}

/** A record of features, one per input, each a value (rank 1) or a row (rank 2); none for inputs of other ranks. */
function recordOf(inputs: TensorMetadata[]): JsonSchema | undefined {
  if (!inputs.every((t) => t.shape.length === 1 || t.shape.length === 2)) return undefined;
  const properties = Object.fromEntries(inputs.map((t) => [t.name, nested(t.datatype, t.shape.slice(1))]));
  return { type: 'object', required: inputs.map((t) => t.name), properties, additionalProperties: false };
}

/** The record (a batch of one) and a batch of records, the first dimension being the batch's. */
function recordForms(inputs: TensorMetadata[]): JsonSchema[] {
  const record = { $ref: '#/$defs/record' };
  return [...(acceptsBatchOf(inputs, 1) ? [record] : []), { type: 'array', ...batchBounds(inputs), items: record }];
}

/** The only input of rank 2 as one row or as rows; of rank 1, as one value. */
function singleInputForms(inputs: TensorMetadata[]): JsonSchema[] {
  const [only] = inputs;
  if (inputs.length !== 1 || !only) return [];
  if (only.shape.length === 1) return acceptsBatchOf(inputs, 1) ? [nonNull(elementSchema(only.datatype))] : [];
  if (only.shape.length !== 2) return [];
  const row = nested(only.datatype, only.shape.slice(1));
  return [...(acceptsBatchOf(inputs, 1) ? [row] : []), { type: 'array', ...batchBounds(inputs), items: row }];
}

/** A scalar body: an unknown datatype still takes no object, array or null (the proxy refuses those as one value). */
function nonNull(element: JsonSchema): JsonSchema {
  return Object.keys(element).length ? element : { type: ['number', 'string', 'boolean'] };
}

function acceptsBatchOf(inputs: TensorMetadata[], size: number): boolean {
  return inputs.every((t) => t.shape[0] === undefined || t.shape[0] < 0 || t.shape[0] === size);
}

/** A batch's length: any but zero, unless an input fixes its first dimension. */
function batchBounds(inputs: TensorMetadata[]): JsonSchema {
  const fixed = inputs.map((t) => t.shape[0]).find((size) => size !== undefined && size >= 0);
  return fixed === undefined ? { minItems: 1 } : { minItems: fixed, maxItems: fixed };
}

/** Nested arrays, one level per dimension (a record's value or a row: at most one). */
function nested(datatype: string, shape: number[]): JsonSchema {
  let schema = elementSchema(datatype);
  for (const size of [...shape].reverse()) schema = size < 0 ? { type: 'array', items: schema } : { type: 'array', items: schema, minItems: size, maxItems: size };
  return schema;
}

function describeTensors(tensors: TensorMetadata[]): string {
  return tensors.map((t) => `${t.name} (${t.datatype}, shape ${t.shape.map((size) => (size < 0 ? 'any' : String(size))).join(' × ') || 'scalar'})`).join(', ');
}
