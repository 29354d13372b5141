import type { ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../infra/db/database.js';
import { InputError } from '../../kernel/errors/errors.js';
import { compileSchema, firstViolation, validateNotingFiles } from '../models/json-schema.js';
import type { IoSchema } from '../models/payload.js';
import type { ModelRow } from '../models/store.js';
import { filesStore, storageConfigsStore } from '../files/store.js';
import { mediaTypeAllowed } from '../files/uploads.service.js';
import { jsonDeeperThan } from '../../infra/http/limits.js';

// Input and feedback validation against a model's schemas. Compiled
// validators are cached per model (schemas of a registered model never change).

const cache = new LRUCache<string, ValidateFunction>({ max: 5000 });

function validatorFor(model: ModelRow, which: 'input' | 'feedback', schema: object): ValidateFunction {
  const key = `${model.id}:${which}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = compileSchema(schema, which === 'input' ? 'input_schema.schema' : 'feedback_schema');
    cache.set(key, validate);
  }
  return validate;
}

// Bodies are JSON text inside JSON: nested deeper than this, they are refused
// before anything (the validator, the file-reference walk) recurses into them.
const MAX_BODY_DEPTH = 100;

function parseJson(body: string, field: string): unknown {
  if (jsonDeeperThan(body, MAX_BODY_DEPTH)) throw new InputError(`${field}: JSON nested deeper than ${MAX_BODY_DEPTH} levels.`);
  try {
    return JSON.parse(body);
  } catch {
    throw new InputError(`${field}: expected JSON text.`);
  }
}

/**
 * The invocation body against the model's input schema: a JSON input is
 * validated by its JSON Schema; a file input must name a readable file of the
 * workspace within the model's fileConstraints, and a writable storage for
 * file outputs. Returns the output storage key, if any.
 */
export async function validateInput(db: Db, model: ModelRow, body: string): Promise<string | null> {
  const input = model.input_schema as IoSchema;
  if (input.type === 'json') {
    if (input.schema) {
      const value = parseJson(body, 'request.body');
      const validate = validatorFor(model, 'input', input.schema);
      if (!validate(value)) throw new InputError(firstViolation(validate.errors, 'request.body'));
    }
    return null;
  }
  const value = parseJson(body, 'request.body') as { fileId?: unknown; outputStorageId?: unknown };
  if (typeof value !== 'object' || value === null || typeof value.fileId !== 'string') throw new InputError('request.body.fileId: required for a file input.');
  await checkFile(db, model.workspace_id, value.fileId, 'request.body.fileId', input.fileConstraints);
  if ((model.output_schema as IoSchema).type !== 'file') return null;
  if (typeof value.outputStorageId !== 'string') throw new InputError('request.body.outputStorageId: required, the model writes a file.');
  if (!(await storageConfigsStore.liveByKey(db, model.workspace_id, value.outputStorageId))) {
    throw new InputError(`request.body.outputStorageId: no storage "${value.outputStorageId}" in this workspace.`);
  }
  return value.outputStorageId;
}

/** Fail-fast feedback validation; any text is accepted when the model has no feedback schema. */
export async function validateFeedback(db: Db, model: ModelRow, body: string): Promise<void> {
  if (!model.feedback_schema) return;
  const value = parseJson(body, 'request.body');
  const validate = validatorFor(model, 'feedback', model.feedback_schema);
  const { valid, files } = validateNotingFiles(validate, value);
  if (!valid) throw new InputError(firstViolation(validate.errors, 'feedback'));
  // The schema's fileConstraints of each reference, by the field path fileReferences gives it.
  const constraints = new Map(files.map(({ instancePath, constraints }) => [`feedback${instancePath.replace(/\//g, '.')}.platform_file_id`, constraints]));
  for (const [path, fileId] of fileReferences(value, 'feedback')) await checkFile(db, model.workspace_id, fileId, path, constraints.get(path));
}

async function checkFile(db: Db, workspaceId: number, fileId: string, field: string, constraints: IoSchema['fileConstraints']): Promise<void> {
  const file = /^[0-9a-f-]{36}$/i.test(fileId) ? await filesStore.inWorkspace(db, workspaceId, fileId) : undefined;
  if (!file) throw new InputError(`${field}: no file ${fileId} in this workspace.`);
  if (!constraints) return;
  if (!mediaTypeAllowed(file.content_type, constraints.mediaTypes)) {
    throw new InputError(`${field}: the file is ${file.content_type}; the model accepts ${constraints.mediaTypes.join(', ')}.`);
  }
  if (Number(file.size) > constraints.maxSizeMb * 1024 * 1024) throw new InputError(`${field}: the file is larger than ${constraints.maxSizeMb} MB.`);
}

/** Every `{platform_file_id}` object in a feedback value, with its path. */
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
