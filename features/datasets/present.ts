import { RECORD_SCHEMA } from './records.js';
import type { DatasetRow, StoredDataset } from './store.js';

export const RECORDS_MEDIA_TYPE = 'application/x-ndjson';
export const RECORDS_FILE = 'records.jsonl';
export const MANIFEST_FILE = 'manifest.json';

/** The API's Dataset. */
export function presentDataset(row: StoredDataset, workspace: string) {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    workspace,
    storage_key: row.storage_key,
    selection: row.selection,
    format: RECORDS_MEDIA_TYPE,
    row_count: row.row_count,
    size: Number(row.size),
    sha256: row.sha256,
    created_at: row.created_at.toISOString(),
  };
}

/** The manifest written beside the records: what they are, how many, and their checksum. */
export function manifestOf(row: DatasetRow, workspace: string): Buffer {
  const manifest = {
    dataset: { id: row.id, name: row.name, version: row.version, workspace, created_at: row.created_at.toISOString() },
    selection: row.selection,
    format: RECORDS_MEDIA_TYPE,
    file: RECORDS_FILE,
    row_count: row.row_count,
    size: Number(row.size),
    sha256: row.sha256,
    schema: RECORD_SCHEMA,
  };
  return Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
}
