import type { ContextEntry } from '../types.js';

/**
 * A body as KServe's v1 protocol takes it: `{instances: [...]}`. An Open
 * Inference request of one tensor becomes its rows (what a v1 explainer of
 * a v2 predictor reads); a body that already has `instances` (or `inputs`)
 * is sent as is; an array of rows is the instances, one object or row is
 * one instance, other text one string.
 */
export function toV1Request(body: string, context?: ContextEntry[]): Record<string, unknown> {
  let value: unknown = body;
  try {
    value = JSON.parse(body);
  } catch {
    // Text that is not JSON is one instance of text.
  }
  const rows = openInferenceRows(value);
  const request = rows ? { instances: rows } : isRequest(value) ? { ...value } : { instances: instancesOf(value) };
  return context?.length ? { ...request, context } : request;
}

function isRequest(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && ('instances' in value || 'inputs' in value);
}

function instancesOf(value: unknown): unknown[] {
  if (!Array.isArray(value)) return [value];
  // A flat list of values is one row; a list of rows or of objects is a batch.
  return value.every((item) => typeof item === 'object' && item !== null) ? value : [value];
}

/** The rows of an Open Inference request's one input tensor (`{inputs: [{shape, data}]}`), split along its first dimension. */
function openInferenceRows(value: unknown): unknown[][] | undefined {
  const inputs = (value as { inputs?: unknown } | null)?.inputs;
  if (!Array.isArray(inputs) || inputs.length !== 1) return undefined;
  const { shape, data } = inputs[0] as { shape?: unknown; data?: unknown };
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0) || !Array.isArray(data)) return undefined;
  const flat = data.flat(Infinity);
  if (shape.length < 2) return [flat];
  const width = (shape as number[]).slice(1).reduce((a, b) => a * b, 1);
  if (width === 0 || flat.length !== width * (shape[0] as number)) return undefined;
  return Array.from({ length: shape[0] as number }, (_, i) => flat.slice(i * width, (i + 1) * width));
}
