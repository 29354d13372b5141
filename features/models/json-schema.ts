import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { InputError } from '../../kernel/errors/errors.js';
import { patternInstructions } from './pattern-cost.js';
import { expansionOf, subschemasOf } from './schema-references.js';

// User-supplied JSON Schemas (Draft 2020-12): model input/output payload
// schemas and feedback schemas. Compiled once per model and cached by the
// caller; remote $refs are never fetched. `fileConstraints` and
// `contentSchema` are annotations the platform reads, not validation keywords.
// A tenant's schema runs on every invocation of its model (on a worker thread
// unless the check is bounded small, features/invocations/validation-pool.ts):
// its patterns run on RE2 (time linear in the input and in the pattern's
// program), and its size, depth, expansion through `$ref`, patterns' programs
// and pairwise `uniqueItems` checks are bounded (docs/decisions.md derives
// the pattern limits from bench/pattern-cost.ts).

/**
 * Limits of a tenant's schema. `expandedNodes` counts subschemas with each
 * `$ref` expanded where it is used. Patterns are counted in RE2 instructions
 * (features/models/pattern-cost.ts): one pattern's, which bounds the time to
 * match one character; those of the schema's distinct patterns together,
 * which bounds compiling them; and each pattern counted wherever the
 * expanded schema applies it, which bounds matching one character of a body
 * against the whole schema.
 */
export const SCHEMA_LIMITS = {
  bytes: 64 * 1024,
  depth: 32,
  uniqueItems: 1000,
  expandedNodes: 10_000,
  patternInstructions: 4_000,
  schemaPatternInstructions: 8_000,
  expandedPatternInstructions: 20_000,
} as const;

/** What checking a body against a schema costs per character, in the units of SCHEMA_LIMITS. */
export interface SchemaCost {
  /** Subschemas, each `$ref` expanded where it is used. */
  nodes: number;
  /** RE2 instructions of the patterns, each counted wherever the expanded schema applies it. */
  patternInstructions: number;
  /** RE2 instructions of the distinct patterns: what compiling the schema compiles. */
  compiledInstructions: number;
}

/** ajv's `code.regExp`: RE2, which has no backtracking (and so no backreferences or lookaround). */
function linearRegExp(pattern: string): RE2JS {
  return RE2JS.compile(pattern);
}

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, logger: false, unicodeRegExp: true, code: { regExp: linearRegExp as never } });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  ajv.addKeyword({ keyword: 'fileConstraints', schemaType: 'object', metaSchema: FILE_CONSTRAINTS, validate: noteFileReference, errors: false });
  return ajv;
}

/** The constraints of a file a schema accepts: media types and size. */
export interface FileConstraints {
  mediaTypes: string[];
  maxSizeMb: number;
  description?: string;
}

const FILE_CONSTRAINTS = {
  type: 'object',
  required: ['mediaTypes', 'maxSizeMb'],
  properties: { mediaTypes: { type: 'array', minItems: 1, items: { type: 'string' } }, maxSizeMb: { type: 'number', exclusiveMinimum: 0 }, description: { type: 'string' } },
};

/** A `{platform_file_id}` object met while validating, with the constraints of the schema that matched it. */
export interface ConstrainedFile {
  /** JSON Pointer of the object in the validated value. */
  instancePath: string;
  constraints: FileConstraints;
}

let noted: ConstrainedFile[] | undefined;

// `fileConstraints` never fails validation: it notes the file references it
// covers, whose files are checked afterwards (their type and size are in the database).
function noteFileReference(constraints: FileConstraints, data: unknown, _parent?: unknown, cxt?: { instancePath: string }): boolean {
  const isReference = typeof data === 'object' && data !== null && typeof (data as { platform_file_id?: unknown }).platform_file_id === 'string';
  if (noted && isReference) noted.push({ instancePath: cxt?.instancePath ?? '', constraints });
  return true;
}

/** Validates `value`, and gives the file references the schema's `fileConstraints` cover (validation is synchronous). */
export function validateNotingFiles(validate: ValidateFunction, value: unknown): { valid: boolean; files: ConstrainedFile[] } {
  noted = [];
  try {
    return { valid: validate(value) as boolean, files: noted };
  } finally {
    noted = undefined;
  }
}

const ajv = createAjv();

/**
 * The checks of a schema that read its text only, bounded by its size: what
 * registration does on the event loop before compiling it on a thread.
 * Throws InputError naming `field`.
 */
export function checkSchemaLimits(schema: unknown, field: string): asserts schema is object {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new InputError(`${field}: expected a JSON Schema object.`);
  checkLimits(schema, field);
  schemaCost(schema, field);
}

/** Compiles a schema or throws InputError naming `field`. */
export function compileSchema(schema: unknown, field: string): ValidateFunction {
  checkSchemaLimits(schema, field);
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

/** Refuses a schema too large or too deep, or one whose `uniqueItems` could compare unboundedly many items pairwise. */
function checkLimits(schema: object, field: string): void {
  if (JSON.stringify(schema).length > SCHEMA_LIMITS.bytes) throw new InputError(`${field}: the schema is larger than ${SCHEMA_LIMITS.bytes} bytes.`);
  const walk = (node: unknown, depth: number, path: string): void => {
    if (node === null || typeof node !== 'object') return;
    if (depth > SCHEMA_LIMITS.depth) throw new InputError(`${field}: the schema is nested deeper than ${SCHEMA_LIMITS.depth} levels.`);
    const record = node as Record<string, unknown>;
    if (!Array.isArray(node) && record.uniqueItems === true && !(typeof record.maxItems === 'number' && record.maxItems <= SCHEMA_LIMITS.uniqueItems)) {
      throw new InputError(`${path || field}: uniqueItems needs maxItems of at most ${SCHEMA_LIMITS.uniqueItems}.`);
    }
    for (const [key, value] of Object.entries(record)) walk(value, depth + 1, `${path || field}.${key}`);
  };
  walk(schema, 0, '');
}

/** The patterns a subschema applies: `pattern`, and the keys of `patternProperties`, with the field naming each. */
function patternsOf(node: unknown, path: string): Array<{ pattern: string; where: string }> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return [];
  const { pattern, patternProperties } = node as { pattern?: unknown; patternProperties?: unknown };
  const found = typeof pattern === 'string' ? [{ pattern, where: `${path}.pattern` }] : [];
  if (typeof patternProperties === 'object' && patternProperties !== null) {
    for (const key of Object.keys(patternProperties)) found.push({ pattern: key, where: `${path}.patternProperties.${key}` });
  }
  return found;
}

/**
 * The schema's cost, read from its text without compiling anything; refuses,
 * naming the field, a reference cycle and a schema past SCHEMA_LIMITS' expansion and pattern limits.
 */
export function schemaCost(schema: object, field: string): SchemaCost {
  const instructions = new Map<string, number>();
  for (const { node, path } of subschemasOf(schema, field)) {
    for (const { pattern, where } of patternsOf(node, path)) {
      if (instructions.has(pattern)) continue;
      const count = patternInstructions(pattern);
      if (count > SCHEMA_LIMITS.patternInstructions) {
        throw new InputError(`${where}: the pattern compiles to about ${count} RE2 instructions (a counted repetition such as {1000} repeats what it follows); at most ${SCHEMA_LIMITS.patternInstructions}.`);
      }
      instructions.set(pattern, count);
    }
  }
  const compiledInstructions = [...instructions.values()].reduce((sum, n) => sum + n, 0);
  if (compiledInstructions > SCHEMA_LIMITS.schemaPatternInstructions) {
    throw new InputError(`${field}: its patterns compile to about ${compiledInstructions} RE2 instructions together; at most ${SCHEMA_LIMITS.schemaPatternInstructions}.`);
  }
  const weightOf = (node: unknown) => patternsOf(node, '').reduce((sum, { pattern }) => sum + instructions.get(pattern)!, 0);
  const { nodes, weight } = expansionOf(schema, field, SCHEMA_LIMITS.expandedNodes, weightOf);
  if (weight > SCHEMA_LIMITS.expandedPatternInstructions) {
    throw new InputError(
      `${field}: its patterns, each counted wherever the schema applies it once each $ref is expanded, come to about ${weight} RE2 instructions per character checked; at most ${SCHEMA_LIMITS.expandedPatternInstructions}.`,
    );
  }
  return { nodes, patternInstructions: weight, compiledInstructions };
}
