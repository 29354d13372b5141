import type { Db } from '../../infra/db/database.js';
import { InputError } from '../../kernel/errors/errors.js';
import type { IoSchema } from '../models/payload.js';
import type { ModelRow } from '../models/store.js';
import { filesStore, storageConfigsStore } from '../files/store.js';
import { mediaTypeAllowed } from '../files/uploads.service.js';
import { parseJson, type BodyCheck } from './body-check.js';
import type { ValidationPool } from './validation-pool.js';

// Input and feedback validation against a model's schemas. The schema check
// runs in the validation pool, off the event loop; the files a body names are
// then read here.

async function checked(validation: ValidationPool, workspaceId: number, check: BodyCheck) {
  const verdict = await validation.check(workspaceId, check);
  if (verdict.refused !== undefined) throw new InputError(verdict.refused);
  return verdict.files;
}

/**
 * The invocation body against the model's input schema: a JSON input is
 * validated by its JSON Schema; a file input must name a readable file of the
 * workspace within the model's fileConstraints, and a writable storage for
 * file outputs. Returns the output storage key, if any.
 */
export async function validateInput(db: Db, validation: ValidationPool, model: ModelRow, body: string): Promise<string | null> {
  const input = model.input_schema as IoSchema;
  if (input.type === 'json') {
    if (input.schema) await checked(validation, model.workspace_id, { key: `${model.id}:input`, schema: input.schema, schemaField: 'input_schema.schema', root: 'request.body', body, withFiles: false });
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
export async function validateFeedback(db: Db, validation: ValidationPool, model: ModelRow, body: string): Promise<void> {
  if (!model.feedback_schema) return;
  const files = await checked(validation, model.workspace_id, { key: `${model.id}:feedback`, schema: model.feedback_schema, schemaField: 'feedback_schema', root: 'feedback', body, withFiles: true });
  for (const { path, fileId, constraints } of files) await checkFile(db, model.workspace_id, fileId, path, constraints);
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
