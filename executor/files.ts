import type { Db } from '../infra/db/database.js';
import { filesStore } from '../features/files/store.js';
import type { UploadsService } from '../features/files/uploads.service.js';
import type { InvocationRow } from '../features/invocations/store.js';
import type { IoSchema } from '../features/models/payload.js';
import type { ModelRow } from '../features/models/store.js';
import type { Tensor } from '../infra/connectors/open-inference/tensors.js';

// File inputs and outputs of models whose schemas have `type: file`.
// The model receives the file as an Open Inference BYTES tensor named "file"
// (base64, with its name and media type as parameters) and answers a file the
// same way; the platform writes that file to the invocation's output storage
// and stores, as the response, the file record plus the model's other outputs.

export class ModelFileError extends Error {}

const isFile = (schema: IoSchema) => schema.type === 'file';

/** The request body the model server receives for this invocation. */
export async function inferenceBody(db: Db, uploads: UploadsService, row: InvocationRow, model: ModelRow): Promise<string> {
  if (!isFile(model.input_schema)) return row.body;
  const { fileId, outputStorageId: _output, ...parameters } = JSON.parse(row.body) as Record<string, unknown>;
  const file = await filesStore.inWorkspace(db, row.workspace_id, String(fileId));
  if (!file) throw new ModelFileError(`The input file ${String(fileId)} no longer exists.`);
  const { stream } = await uploads.openFile(file);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const tensor: Tensor = {
    name: 'file',
    datatype: 'BYTES',
    shape: [1],
    data: [Buffer.concat(chunks).toString('base64')],
    parameters: { content_type: 'base64', filename: file.file_name, media_type: file.content_type },
  };
  return JSON.stringify({ inputs: [tensor], parameters });
}

/** The response to store: unchanged, or with the produced file written to the output storage. */
export async function storedResponse(uploads: UploadsService, row: InvocationRow, model: ModelRow, response: string): Promise<string> {
  if (!isFile(model.output_schema) || !row.output_storage_key) return response;
  const outputs = (JSON.parse(response) as { outputs?: Tensor[] }).outputs ?? [];
  const produced = outputs.find((output) => output.name === 'file' && output.datatype === 'BYTES');
  const data = produced?.data?.[0];
  if (typeof data !== 'string') throw new ModelFileError('The model answered no "file" output although its output schema is a file.');
  const stored = await uploads.storeGenerated(
    row.workspace_id,
    row.output_storage_key,
    {
      fileName: String(produced!.parameters?.filename ?? `${model.model_code}-output`),
      contentType: String(produced!.parameters?.media_type ?? 'application/octet-stream'),
      data: Buffer.from(data, 'base64'),
    },
    row.user_id,
  );
  return JSON.stringify({ file: stored, outputs: outputs.filter((output) => output !== produced) });
}
