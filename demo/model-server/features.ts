import type { Tensor } from '../../infra/connectors/open-inference/tensors.js';
import { IRIS_FEATURES } from './iris-data.js';
import { BadInferenceRequest } from './problems.js';

const EXPECTED = `four tensors named ${IRIS_FEATURES.join(', ')}, or one tensor of shape [n, 4]`;
const NON_NUMERIC = ['BYTES', 'BOOL'];

/** Iris measurements, one row of four per flower, from the request's input tensors. */
export function irisRows(inputs: unknown): number[][] {
  if (!Array.isArray(inputs) || inputs.length === 0) throw new BadInferenceRequest(`no inputs: expected ${EXPECTED}`);
  const tensors = inputs as Tensor[];
  const named = IRIS_FEATURES.map((feature) => tensors.find((tensor) => tensor?.name === feature));
  if (named.every((tensor) => tensor !== undefined)) return fromNamedTensors(named as Tensor[]);
  if (tensors.length === 1) return fromMatrix(tensors[0] as Tensor);
  throw new BadInferenceRequest(`expected ${EXPECTED}`);
}

function fromNamedTensors(tensors: Tensor[]): number[][] {
  const columns = tensors.map(numbersOf);
  const count = columns[0]?.length ?? 0;
  if (count === 0 || columns.some((column) => column.length !== count)) throw new BadInferenceRequest('the four feature tensors must hold the same number of values');
  return Array.from({ length: count }, (_, i) => columns.map((column) => column[i] ?? 0));
}

function fromMatrix(tensor: Tensor): number[][] {
  const values = numbersOf(tensor);
  const width = Array.isArray(tensor.shape) ? tensor.shape[tensor.shape.length - 1] : undefined;
  if (width !== IRIS_FEATURES.length || values.length === 0 || values.length % width !== 0) {
    throw new BadInferenceRequest(`tensor "${String(tensor.name)}" must have shape [n, 4]; expected ${EXPECTED}`);
  }
  return Array.from({ length: values.length / width }, (_, i) => values.slice(i * width, (i + 1) * width));
}

function numbersOf(tensor: Tensor): number[] {
  if (NON_NUMERIC.includes(tensor.datatype)) throw new BadInferenceRequest(`tensor "${tensor.name}" must be numeric, not ${tensor.datatype}`);
  const values = Array.isArray(tensor.data) ? tensor.data.flat(Infinity) : [];
  if (!values.every((value) => typeof value === 'number' && Number.isFinite(value))) throw new BadInferenceRequest(`tensor "${tensor.name}" holds a value that is not a number`);
  return values as number[];
}
