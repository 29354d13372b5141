import type { ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { InputError } from '../../kernel/errors/errors.js';
import { jsonDeeperThan } from '../../infra/http/limits.js';
import { compileSchema, firstViolation, validateNotingFiles, type FileConstraints } from '../models/json-schema.js';

// An invocation or feedback body against its model's schema: parsing,
// validation and the walk for file references, all synchronous and all
// proportional to the body and the schema. The validation pool runs it off
// the event loop that answers requests, unless its cost is bounded small.

// Bodies are JSON text inside JSON: nested deeper than this, they are refused
// before anything (the validator, the file-reference walk) recurses into them.
const MAX_BODY_DEPTH = 100;

export function parseJson(body: string, field: string): unknown {
  if (jsonDeeperThan(body, MAX_BODY_DEPTH)) throw new InputError(`${field}: JSON nested deeper than ${MAX_BODY_DEPTH} levels.`);
  try {
    return JSON.parse(body);
  } catch {
    throw new InputError(`${field}: expected JSON text.`);
  }
}

/** One body to check against one of a model's schemas. */
export interface BodyCheck {
  /** The model and which of its schemas: a registered model's schemas never change, so their validators are cached by it. */
  key: string;
  schema: object;
  /** Where the schema was given at registration, for a schema refused now. */
  schemaField: string;
  /** The root of the field paths a violation names: `request.body` or `feedback`. */
  root: string;
  body: string;
  /** Also give the body's `{platform_file_id}` references (feedback). */
  withFiles: boolean;
}

/** A `{platform_file_id}` object of the body: its field path, the file and the schema's fileConstraints over it. */
export interface FileReference {
  path: string;
  fileId: string;
  constraints?: FileConstraints;
}

/** A schema to compile, no body: registration's last check of a schema, off the event loop. */
export interface SchemaCompile {
  compileOnly: true;
  schema: object;
  schemaField: string;
}

/** Refused with the message of the 400, or valid with the body's file references. */
export type BodyVerdict = { refused: string } | { refused?: undefined; files: FileReference[] };

/** Compiled validators by check key; keys are unique within one database, so each platform keeps its own. */
export type Validators = LRUCache<string, ValidateFunction>;

export const newValidators = (): Validators => new LRUCache<string, ValidateFunction>({ max: 5000 });

function validatorFor(check: BodyCheck, validators: Validators): ValidateFunction {
  let validate = validators.get(check.key);
  if (!validate) {
    validate = compileSchema(check.schema, check.schemaField);
    validators.set(check.key, validate);
  }
  return validate;
}

/** The verdict on one body; an InputError becomes a refusal, so that it crosses a thread intact. */
export function checkBody(check: BodyCheck, validators: Validators): BodyVerdict {
  try {
    const validate = validatorFor(check, validators);
    const value = parseJson(check.body, 'request.body');
    if (!check.withFiles) return validate(value) ? { files: [] } : { refused: firstViolation(validate.errors, check.root) };
    const { valid, files } = validateNotingFiles(validate, value);
    if (!valid) return { refused: firstViolation(validate.errors, check.root) };
    // The schema's fileConstraints of each reference, by the field path fileReferences gives it.
    const constraints = new Map(files.map(({ instancePath, constraints }) => [`${check.root}${instancePath.replace(/\//g, '.')}.platform_file_id`, constraints]));
    return { files: Array.from(fileReferences(value, check.root), ([path, fileId]) => ({ path, fileId, constraints: constraints.get(path) })) };
  } catch (error) {
    if (error instanceof InputError) return { refused: error.message };
    throw error;
  }
}

/** The verdict on a schema alone: refused with ajv's message naming its field, or valid. */
export function compileVerdict(task: SchemaCompile): BodyVerdict {
  try {
    compileSchema(task.schema, task.schemaField);
    return { files: [] };
  } catch (error) {
    if (error instanceof InputError) return { refused: error.message };
    throw error;
  }
}

/** Every `{platform_file_id}` object in a value, with its path. */
function* fileReferences(value: unknown, path: string): Generator<[string, string]> {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* fileReferences(item, `${path}.${i}`);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === 'platform_file_id' && typeof item === 'string') yield [`${path}.platform_file_id`, item];
      else yield* fileReferences(item, `${path}.${key}`);
    }
  }
}
