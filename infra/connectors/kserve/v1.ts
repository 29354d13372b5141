import type { ContextEntry } from '../types.js';

/**
 * A body as KServe's v1 protocol takes it: `{instances: [...]}`. A body that
 * already has `instances` (or `inputs`) is sent as is; an array of rows is
 * the instances, one object or row is one instance, other text one string.
 */
export function toV1Request(body: string, context?: ContextEntry[]): Record<string, unknown> {
  let value: unknown = body;
  try {
    value = JSON.parse(body);
  } catch {
    // Text that is not JSON is one instance of text.
  }
  const request = isRequest(value) ? { ...value } : { instances: instancesOf(value) };
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
