import { InputError } from '../../../kernel/errors/errors.js';
import type { ContextEntry } from '../types.js';

/** An Open Inference Protocol (v2) tensor, data flattened in row-major order. */
export interface Tensor {
  name: string;
  shape: number[];
  datatype: string;
  data: unknown[];
  parameters?: Record<string, unknown>;
}

export interface InferenceRequest {
  id?: string;
  inputs: Tensor[];
  outputs?: unknown[];
  parameters?: Record<string, unknown>;
}

type Scalar = number | string | boolean;

const FIELD = 'request.body';
/** The name of the single tensor made from a bare array: MLServer's and KServe's default. */
export const SINGLE_INPUT = 'input-0';

/**
 * Turns an invocation body into an inference request. Accepted bodies:
 * an Open Inference request (kept as is); an object of features (one tensor
 * per feature); an array of such objects (a batch); an array of numbers or of
 * equal-length rows (one tensor `input-0`, shape [1, k] or [n, k]); any other
 * text (one BYTES tensor).
 */
export function toInferenceRequest(body: string): InferenceRequest {
  if (body.trim() === '') return { inputs: [] };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { inputs: [{ name: SINGLE_INPUT, shape: [1], datatype: 'BYTES', data: [body] }] };
  }
  if (isInferenceRequest(value)) return { ...value };
  if (isRecord(value)) return { inputs: recordsToTensors([value]) };
  if (Array.isArray(value)) return { inputs: arrayToTensors(value) };
  if (value === null) throw new InputError(`${FIELD} is null; send the features as a JSON object or array`);
  return { inputs: [{ name: SINGLE_INPUT, shape: [1], datatype: datatypeOf([value], FIELD, true), data: [value] }] };
}

/** Context rides in `parameters.context` as JSON text: the protocol allows only scalar parameter values. */
export function withContext(request: InferenceRequest, context: ContextEntry[] | undefined): InferenceRequest {
  if (!context || context.length === 0) return request;
  return { ...request, parameters: { ...request.parameters, context: JSON.stringify(context) } };
}

/** An Open Inference request already: `inputs` of named, typed, shaped tensors. */
export function isInferenceRequest(value: unknown): value is InferenceRequest {
  if (!isRecord(value) || !Array.isArray(value.inputs)) return false;
  return value.inputs.every((input) => isRecord(input) && typeof input.name === 'string' && typeof input.datatype === 'string' && Array.isArray(input.shape));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayToTensors(values: unknown[]): Tensor[] {
  if (values.length === 0) throw new InputError(`${FIELD} is an empty array`);
  if (values.every(isRecord)) return recordsToTensors(values);
  if (values.every(isScalar)) return [matrixTensor([values])];
  if (values.every(Array.isArray)) return [matrixTensor(values)];
  throw new InputError(`${FIELD} must be an array of objects, of values or of rows, not a mixture`);
}

/** Rows of equal length as one [n, k] tensor. Numbers are sent as FP64: feature matrices are floats. */
function matrixTensor(rows: unknown[][]): Tensor {
  const width = rows[0]?.length ?? 0;
  if (width === 0) throw new InputError(`${FIELD} holds an empty row`);
  rows.forEach((row, index) => {
    if (row.length !== width) throw new InputError(`${FIELD}: row ${index} has ${row.length} values, row 0 has ${width}`);
    if (!row.every(isScalar)) throw new InputError(`${FIELD}: row ${index} holds a value that is not a number, string or boolean`);
  });
  const data = rows.flat();
  return { name: SINGLE_INPUT, shape: [rows.length, width], datatype: datatypeOf(data, FIELD, false), data };
}

/** One tensor per feature, batch size first: [n] for values, [n, k] for arrays of k values. */
function recordsToTensors(rows: Array<Record<string, unknown>>): Tensor[] {
  const names = Object.keys(rows[0] ?? {});
  if (names.length === 0) throw new InputError(`${FIELD} is an empty object`);
  rows.forEach((row, index) => {
    const missing = names.find((name) => !(name in row)) ?? Object.keys(row).find((name) => !names.includes(name));
    if (missing !== undefined) throw new InputError(`${FIELD}: record ${index} does not have the same features as record 0 ("${missing}")`);
  });
  return names.map((name) => featureTensor(name, rows.map((row) => row[name])));
}

function featureTensor(name: string, values: unknown[]): Tensor {
  const where = `${FIELD}: feature "${name}"`;
  if (values.every(isScalar)) return { name, shape: [values.length], datatype: datatypeOf(values, where, true), data: values };
  if (!values.every(Array.isArray)) throw new InputError(`${where} must be a number, string, boolean or an array of them`);
  const width = values[0]?.length ?? 0;
  if (width === 0 || values.some((value) => value.length !== width)) throw new InputError(`${where} must hold arrays of one non-zero length`);
  const data = values.flat();
  if (!data.every(isScalar)) throw new InputError(`${where} may hold only numbers, strings or booleans`);
  return { name, shape: [values.length, width], datatype: datatypeOf(data, where, true), data };
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean';
}

function datatypeOf(values: unknown[], where: string, integers: boolean): string {
  if (values.every((value) => typeof value === 'boolean')) return 'BOOL';
  if (values.every((value) => typeof value === 'string')) return 'BYTES';
  if (values.every((value) => typeof value === 'number')) return integers && values.every(Number.isSafeInteger) ? 'INT64' : 'FP64';
  throw new InputError(`${where} mixes numbers, strings or booleans; a tensor holds one type`);
}
