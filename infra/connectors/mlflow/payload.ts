import type { ContextEntry } from '../types.js';

/** The body formats of MLflow's scoring server (`POST /invocations`). */
export type ScoringPayload = Record<string, unknown>;

const SCORING_KEYS = ['dataframe_split', 'dataframe_records', 'instances', 'inputs'];

/**
 * Turns an invocation body into a scoring request: a body already in one of
 * MLflow's formats is kept; `{columns, data}`, a list of records or a single
 * record of plain values becomes `dataframe_split`; any other JSON goes in
 * `inputs`, and text that is not JSON is sent as `inputs: [text]`.
 */
export function toScoringPayload(body: string): ScoringPayload {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { inputs: [body] };
  }
  if (isRecord(value) && SCORING_KEYS.some((key) => key in value)) return { ...value };
  if (isSplitFrame(value)) return { dataframe_split: value };
  if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) return { dataframe_split: splitOf(value) };
  if (isRecord(value) && Object.keys(value).length > 0 && Object.values(value).every(isPlain)) return { dataframe_split: splitOf([value]) };
  return { inputs: value };
}

/**
 * Context goes in `params.context` as JSON text: MLflow checks params against
 * the model signature, and a string parameter is what a signature can declare.
 */
export function withContext(payload: ScoringPayload, context: ContextEntry[] | undefined): ScoringPayload {
  if (!context || context.length === 0) return payload;
  const params = isRecord(payload.params) ? payload.params : {};
  return { ...payload, params: { ...params, context: JSON.stringify(context) } };
}

function isSplitFrame(value: unknown): value is { columns: unknown[]; data: unknown[] } {
  return isRecord(value) && Array.isArray(value.columns) && Array.isArray(value.data) && Object.keys(value).every((key) => ['columns', 'data', 'index'].includes(key));
}

/** Records as columns and rows; columns in order of first appearance, absent values null. */
function splitOf(records: Array<Record<string, unknown>>): { columns: string[]; data: unknown[][] } {
  const columns: string[] = [];
  for (const record of records) for (const key of Object.keys(record)) if (!columns.includes(key)) columns.push(key);
  return { columns, data: records.map((record) => columns.map((column) => (column in record ? record[column] : null))) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPlain(value: unknown): boolean {
  return value === null || ['number', 'string', 'boolean'].includes(typeof value);
}
