import type { TableColumn, TableRow } from './layout.js';
import { parquetFile } from './parquet.js';

/** The file formats of a dataset's table. */
export const TABLE_FORMATS = ['jsonl', 'parquet'] as const;
export type TableFormat = (typeof TABLE_FORMATS)[number];

export const TABLE_FILES: Record<TableFormat, { file: string; mediaType: string; extension: string }> = {
  jsonl: { file: 'table.jsonl', mediaType: 'application/x-ndjson', extension: 'jsonl' },
  parquet: { file: 'table.parquet', mediaType: 'application/vnd.apache.parquet', extension: 'parquet' },
};

/** The key of the Parquet footer's metadata that holds the dataset and its columns (JSON). */
export const PARQUET_METADATA_KEY = 'didyma.dataset';

/**
 * The table in a format: JSON Lines (one object per row, every column, in
 * order; timestamps as ISO 8601 text) or Parquet (with `description` in its metadata).
 */
export function tableFile(format: TableFormat, columns: TableColumn[], rows: AsyncIterable<TableRow>, description: Record<string, unknown>): AsyncIterable<Buffer> {
  if (format === 'parquet') return parquetFile(columns, rows, [{ key: PARQUET_METADATA_KEY, value: JSON.stringify(description) }]);
  return jsonLines(rows);
}

async function* jsonLines(rows: AsyncIterable<TableRow>): AsyncGenerator<Buffer> {
  for await (const row of rows) yield Buffer.from(`${JSON.stringify(row)}\n`);
}
