import { RECORD_SCHEMA } from './records.js';
import type { DatasetRow, StoredDataset } from './store.js';
import { TABLE_FILES, type TableFormat } from './table/files.js';
import type { TableColumn } from './table/layout.js';

export const RECORDS_MEDIA_TYPE = 'application/x-ndjson';
export const RECORDS_FILE = 'records.jsonl';
export const MANIFEST_FILE = 'manifest.json';

/** The table of a version as the API's Dataset shows it; null for versions exported before tables existed. */
function presentTable(row: DatasetRow) {
  if (!row.table_format) return null;
  return { format: row.table_format, media_type: TABLE_FILES[row.table_format].mediaType, size: Number(row.table_size), sha256: row.table_sha256 };
}

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
    table: presentTable(row),
    created_at: row.created_at.toISOString(),
  };
}

/** What identifies a version, in its manifest and in its Parquet table's metadata. */
export function datasetIdentity(row: Pick<DatasetRow, 'id' | 'name' | 'version' | 'created_at'>, workspace: string) {
  return { id: row.id, name: row.name, version: row.version, workspace, created_at: row.created_at.toISOString() };
}

/** The manifest written beside the records: what they are, how many, their checksum, and the table's columns. */
export function manifestOf(row: DatasetRow & { table_format: TableFormat }, workspace: string, columns: TableColumn[]): Buffer {
  const manifest = {
    dataset: datasetIdentity(row, workspace),
    selection: row.selection,
    format: RECORDS_MEDIA_TYPE,
    file: RECORDS_FILE,
    row_count: row.row_count,
    size: Number(row.size),
    sha256: row.sha256,
    schema: RECORD_SCHEMA,
    table: { ...presentTable(row), file: TABLE_FILES[row.table_format].file, columns },
  };
  return Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
}
