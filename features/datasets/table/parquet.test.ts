import { expect } from 'chai';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import type { TableColumn, TableRow } from './layout.js';
import { tableFile } from './files.js';

const COLUMNS: TableColumn[] = [
  { name: 'invocation_id', source: 'invocation', type: 'string', nullable: false },
  { name: 'order', source: 'invocation', type: 'int64', nullable: false },
  { name: 'created_at', source: 'invocation', type: 'timestamp', nullable: false },
  { name: 'input_x', source: 'input', field: 'x', type: 'double', nullable: true },
  { name: 'output_ok', source: 'output', field: 'ok', type: 'boolean', nullable: true },
  { name: 'output_p', source: 'output', field: 'p', type: 'list<double>', nullable: true },
  { name: 'output_grid', source: 'output', field: 'grid', type: 'json', nullable: true },
];
const ROWS: TableRow[] = [
  { invocation_id: 'a', order: 0, created_at: '2026-01-01T00:00:00.123Z', input_x: 5.1, output_ok: true, output_p: [0.25, 0.75], output_grid: '[[1,2]]' },
  { invocation_id: 'b', order: 1, created_at: '2026-01-01T00:00:01.000Z', input_x: null, output_ok: null, output_p: null, output_grid: null },
];

async function written(format: 'jsonl' | 'parquet', rows: TableRow[]): Promise<Buffer> {
  async function* source() {
    yield* rows;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of tableFile(format, COLUMNS, source(), { dataset: { id: 'd1' }, columns: COLUMNS })) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const arrayBufferOf = (buffer: Buffer) => buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;

describe('dataset table files', () => {
  it('writes Parquet with the columns’ own types, every value, and the columns in the metadata', async () => {
    const file = arrayBufferOf(await written('parquet', ROWS));
    const metadata = parquetMetadata(file);
    const leaves = Object.fromEntries(parquetSchema(metadata).children.map((child) => [child.element.name, child]));
    expect(leaves.order!.element).to.include({ type: 'INT64', repetition_type: 'REQUIRED' });
    expect(leaves.created_at!.element.logical_type).to.deep.equal({ type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' });
    expect(leaves.output_p!.element.logical_type).to.deep.equal({ type: 'LIST' });
    expect(leaves.output_p!.children[0]!.children[0]!.element).to.include({ name: 'element', type: 'DOUBLE' });
    const described = JSON.parse(metadata.key_value_metadata!.find((entry) => entry.key === 'didyma.dataset')!.value!);
    expect(described.columns).to.deep.equal(COLUMNS);

    const rows = await parquetReadObjects({ file });
    expect(rows).to.deep.equal([
      { invocation_id: 'a', order: 0n, created_at: new Date('2026-01-01T00:00:00.123Z'), input_x: 5.1, output_ok: true, output_p: [0.25, 0.75], output_grid: '[[1,2]]' },
      { invocation_id: 'b', order: 1n, created_at: new Date('2026-01-01T00:00:01.000Z'), input_x: null, output_ok: null, output_p: undefined, output_grid: null },
    ]);
  });

  it('writes a valid Parquet file with every column when there is no row', async () => {
    const file = arrayBufferOf(await written('parquet', []));
    const metadata = parquetMetadata(file);
    expect(Number(metadata.num_rows)).to.equal(0);
    expect(parquetSchema(metadata).children.map((child) => child.element.name)).to.deep.equal(COLUMNS.map((column) => column.name));
  });

  it('writes JSON Lines: one object per row, in column order', async () => {
    const lines = (await written('jsonl', ROWS)).toString('utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).to.deep.equal(ROWS);
    expect(Object.keys(JSON.parse(lines[0]!))).to.deep.equal(COLUMNS.map((column) => column.name));
  });
});
