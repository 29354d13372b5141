import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

// The JSON Schema engines of the OpenAPI 3.1 documents. Requests: parameters
// and bodies are coerced to their declared types and get their defaults (a
// query string is text; `limit=10` is the integer 10). Responses: checked as
// they are, nothing added. OpenAPI's own keywords (`example`, `discriminator`…)
// are annotations, hence `strict: false`.

const INT32 = 2 ** 31 - 1;

function withOpenApiFormats(ajv: Ajv2020): Ajv2020 {
  (addFormats as unknown as (ajv: Ajv2020, options: object) => void)(ajv, { mode: 'fast' });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n <= INT32 && n >= -INT32 - 1 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat('float', { type: 'number', validate: () => true });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  // Binary content is streamed by its handler, never held as a JSON string.
  ajv.addFormat('binary', true);
  ajv.addFormat('password', true);
  return ajv;
}

const common = { strict: false, strictNumbers: true, strictTuples: true, allowUnionTypes: false, validateSchema: false, removeAdditional: false, allErrors: false } as const;

export const requestAjv = () => withOpenApiFormats(new Ajv2020({ ...common, coerceTypes: true, useDefaults: true }));
export const responseAjv = () => withOpenApiFormats(new Ajv2020({ ...common, coerceTypes: false, useDefaults: false }));

/**
 * A request validator. Ajv coerces the text "1e309" or "Infinity" to Infinity
 * for a number or an integer, and its range keywords skip non-finite numbers:
 * `maximum: 2147483647` let Infinity through to a database query (a 500). What
 * a request validator accepts therefore holds finite numbers only.
 */
export function compileRequest(ajv: Ajv2020, schema: object): ValidateFunction {
  const validate = ajv.compile(schema);
  const checked = ((data: unknown) => {
    if (!validate(data)) {
      checked.errors = validate.errors;
      return false;
    }
    const path = nonFinitePath(data, '');
    checked.errors = path === undefined ? null : [notFinite(path)];
    return path === undefined;
  }) as ValidateFunction;
  return checked;
}

/** The JSON pointer of the first non-finite number in `value`, if any. */
function nonFinitePath(value: unknown, path: string): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = nonFinitePath(item, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

const notFinite = (instancePath: string): ErrorObject => ({ instancePath, schemaPath: '#', keyword: 'type', params: {}, message: 'must be a finite number' });
