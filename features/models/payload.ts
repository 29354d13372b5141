import { InputError } from '../../kernel/errors/errors.js';
import { checkSchemaLimits } from './json-schema.js';
import type { RetryPolicyPayload } from './retry-policy.js';

export const MAX_EXPLAINERS = 10;

/**
 * Feedback properties a feedback schema may not declare: a dataset table
 * names a feedback field's column `feedback_<field>`, and these columns are
 * the platform's own (`feedback_count`, features/datasets/table/cells.ts).
 */
export const RESERVED_FEEDBACK_FIELDS: ReadonlySet<string> = new Set(['count']);

export interface IoSchema {
  type: 'json' | 'file';
  description?: string;
  schema?: Record<string, unknown>;
  fileConstraints?: { mediaTypes: string[]; maxSizeMb: number; description?: string };
  contentSchema?: Record<string, unknown>;
  fields?: Array<{ name: string; type: string; required?: boolean }>;
}

export interface ModelPayload {
  model_code: string;
  version: string;
  name: string;
  description: string;
  /** Absent: the registry's signature of the model gives it. */
  input_schema?: IoSchema;
  output_schema?: IoSchema;
  realtime_execution?: boolean;
  allow_download?: boolean;
  need_context?: boolean;
  /** How its transient failures are retried; an explainer has its own. */
  retry_policy?: RetryPolicyPayload;
  explainer?: ModelPayload;
  model_card_file_id: string;
  feedback_schema?: Record<string, unknown>;
}

export interface ChainLink {
  payload: ModelPayload;
  /** Where this link sits in the request body, for error messages: '' or 'explainer.' … */
  field: string;
  position: number;
}

/** The model and its explainers, in order, after the checks the OpenAPI schema cannot express. */
export function chainOf(payload: ModelPayload): ChainLink[] {
  const chain: ChainLink[] = [];
  let link: ModelPayload | undefined = payload;
  let field = '';
  while (link) {
    if (chain.length > MAX_EXPLAINERS) {
      throw new InputError(`explainer: at most ${MAX_EXPLAINERS} explainers are supported.`, [{ field: 'explainer', message: `at most ${MAX_EXPLAINERS} explainers` }]);
    }
    chain.push({ payload: link, field, position: chain.length });
    field = `${field}explainer.`;
    link = link.explainer;
  }
  const seen = new Set<string>();
  for (const { payload: p, field: f } of chain) {
    const key = `${p.model_code}\u0000${p.version}`;
    if (seen.has(key)) throw new InputError(`${f}model_code: (${p.model_code}, ${p.version}) appears twice in the explainer chain.`);
    seen.add(key);
    checkLink(p, f);
  }
  return chain;
}

function checkLink(payload: ModelPayload, field: string): void {
  if (payload.input_schema) checkIoSchema(payload.input_schema, `${field}input_schema`, true);
  if (payload.output_schema) checkIoSchema(payload.output_schema, `${field}output_schema`, false);
  if (payload.feedback_schema !== undefined) {
    checkSchemaLimits(payload.feedback_schema, `${field}feedback_schema`);
    checkFeedbackFields(payload.feedback_schema, `${field}feedback_schema`);
  }
}

/** A feedback schema declares no property whose dataset column would be one of the platform's. */
function checkFeedbackFields(schema: Record<string, unknown>, field: string): void {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return;
  const reserved = Object.keys(properties).find((name) => RESERVED_FEEDBACK_FIELDS.has(name));
  if (reserved === undefined) return;
  const where = `${field}.properties.${reserved}`;
  const message = `reserved: a dataset table names this field's column feedback_${reserved}, which is the platform's own; name the property otherwise.`;
  throw new InputError(`${where}: ${message}`, [{ field: where, message }]);
}

/**
 * The checks a given schema passes on the event loop, for one a registry
 * gave too (a tenant's registry: the same limits apply); compiling it is left
 * to `schemasOf`'s caller, off the event loop.
 */
export function checkIoSchema(io: IoSchema, field: string, isInput: boolean): void {
  if (io.schema !== undefined) checkSchemaLimits(io.schema, `${field}.schema`);
  if (io.type === 'file' && isInput && !io.fileConstraints) {
    throw new InputError(`${field}.fileConstraints: required when type is file (mediaTypes and maxSizeMb).`);
  }
}

/** The JSON Schemas a payload gives, each with the field naming it (`field` is the link's prefix). */
export function schemasOf(payload: ModelPayload, field: string): Array<{ schema: object; field: string }> {
  const found: Array<{ schema: object; field: string }> = [];
  if (payload.input_schema?.schema) found.push({ schema: payload.input_schema.schema, field: `${field}input_schema.schema` });
  if (payload.output_schema?.schema) found.push({ schema: payload.output_schema.schema, field: `${field}output_schema.schema` });
  if (payload.feedback_schema) found.push({ schema: payload.feedback_schema, field: `${field}feedback_schema` });
  return found;
}
