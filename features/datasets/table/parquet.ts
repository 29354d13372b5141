import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { KeyValue, SchemaElement } from 'hyparquet';
import type { TableColumn, TableRow } from './layout.js';

/** Rows per row group: a group is held in memory while it is encoded. */
const ROW_GROUP_ROWS = 10_000;
const CREATED_BY = 'didyma (hyparquet-writer)';

/** Hands each finished part of the file on instead of growing one buffer: the library's flush hook. */
class ChunkWriter extends ByteWriter {
  readonly chunks: Buffer[] = [];

  flush(): void {
    this.chunks.push(Buffer.from(this.getBytes()));
    this.index = 0;
  }

  override finish(): void {
    this.flush();
  }

  take(): Buffer {
    const taken = Buffer.concat(this.chunks);
    this.chunks.length = 0;
    return taken;
  }
}

/**
 * A Parquet file of the rows, yielded a row group at a time. The columns'
 * types are Parquet's own (strings, 64-bit integers, doubles, booleans,
 * UTC timestamps in milliseconds, three-level lists), so pandas, polars,
 * DuckDB and Spark read them as they are; `metadata` goes into the footer's
 * key-value metadata.
 */
export async function* parquetFile(columns: TableColumn[], rows: AsyncIterable<TableRow>, metadata: KeyValue[]): AsyncGenerator<Buffer> {
  const writer = new ChunkWriter();
  const parquet = new ParquetWriter({ writer, schema: parquetSchema(columns), kvMetadata: metadata, createdBy: CREATED_BY });
  yield writer.take();
  let group: TableRow[] = [];
  const writeGroup = () => {
    parquet.write({ columnData: columns.map((column) => ({ name: column.name, data: group.map((row) => parquetValue(row[column.name], column.type)) })), rowGroupSize: group.length });
    group = [];
    return writer.take();
  };
  for await (const row of rows) {
    group.push(row);
    if (group.length >= ROW_GROUP_ROWS) yield writeGroup();
  }
  if (group.length > 0) yield writeGroup();
  await parquet.finish();
  yield writer.take();
}

export function parquetSchema(columns: TableColumn[]): SchemaElement[] {
  const root: SchemaElement = { name: 'root', num_children: columns.length };
  return [root, ...columns.flatMap(columnElements)];
}

function columnElements(column: TableColumn): SchemaElement[] {
  const repetition = column.nullable ? 'OPTIONAL' : 'REQUIRED';
  const list = /^list<(.+)>$/.exec(column.type);
  if (!list) return [{ name: column.name, repetition_type: repetition, ...PHYSICAL[column.type] }];
  return [
    { name: column.name, repetition_type: repetition, num_children: 1, converted_type: 'LIST', logical_type: { type: 'LIST' } },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'OPTIONAL', ...PHYSICAL[list[1]!] },
  ];
}

const STRING: Partial<SchemaElement> = { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };

// JSON text is written as a plain string: Parquet's JSON type reads as bytes or an extension type in some readers.
const PHYSICAL: Record<string, Partial<SchemaElement>> = {
  boolean: { type: 'BOOLEAN' },
  int64: { type: 'INT64' },
  double: { type: 'DOUBLE' },
  string: STRING,
  json: STRING,
  timestamp: { type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } },
};

/** The library's value for a column type: bigint for 64-bit integers, Date for timestamps. */
function parquetValue(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => parquetValue(item, type.slice('list<'.length, -1)));
  if (type === 'int64') return BigInt(value as number);
  if (type === 'timestamp') return new Date(value as string);
  return value;
}
