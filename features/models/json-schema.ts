import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { InputError } from '../../kernel/errors/errors.js';

// User-supplied JSON Schemas (Draft 2020-12): model input/output payload
// schemas and feedback schemas. Compiled once per model and cached by the
// caller; remote $refs are never fetched. `fileConstraints` and
// `contentSchema` are annotations the platform reads, not validation keywords.
function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, logger: false, unicodeRegExp: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  ajv.addKeyword({ keyword: 'fileConstraints' });
  return ajv;
}

const ajv = createAjv();

/** Compiles a schema or throws InputError naming `field`. */
export function compileSchema(schema: unknown, field: string): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new InputError(`${field}: expected a JSON Schema object.`);
  try {
    // A fresh $id-less copy: user schemas must not register ids in the shared instance.
    const { $id: _ignored, ...rest } = schema as Record<string, unknown>;
    return ajv.compile(rest);
  } catch (error) {
    throw new InputError(`${field}: not a valid JSON Schema (2020-12): ${(error as Error).message}`);
  }
}

/** The first violation, as "field.path: message" (fail-fast). */
export function firstViolation(errors: ErrorObject[] | null | undefined, root: string): string {
  const error = errors?.[0];
  if (!error) return `${root}: invalid`;
  const missing = error.keyword === 'required' ? `.${(error.params as { missingProperty: string }).missingProperty}` : '';
  const extra = error.keyword === 'additionalProperties' ? `.${(error.params as { additionalProperty: string }).additionalProperty}` : '';
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const field = [root, path].filter(Boolean).join('.') + missing + extra;
  return `${field}: ${error.message ?? 'invalid'}`;
}
