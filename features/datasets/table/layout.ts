import { FEEDBACK_COLUMNS, INVOCATION_COLUMNS, REQUIRED_COLUMNS, declaredColumns, type Cell, type ColumnKey, type ModelShape, type Source } from './cells.js';
import { cellValue, settled, typeName, typeOfValue, widen, type ColumnType, type ColumnTypeName } from './column-type.js';

/** One column of a dataset table, as the manifest and the Parquet metadata describe it. */
export interface TableColumn extends ColumnKey {
  type: ColumnTypeName;
  nullable: boolean;
}

/** A table row: column name to value, typed by its column (timestamps as ISO 8601 text). */
export type TableRow = Record<string, unknown>;

const FAMILY_ORDER: Source[] = ['invocation', 'input', 'output', 'explanation', 'feedback'];

interface Slot {
  key: ColumnKey;
  type: ColumnType;
  /** The platform's own columns keep their type: their values are what the platform wrote. */
  fixed?: boolean;
}

/**
 * The columns of one export: those the models' schemas declare, widened by
 * every value met (`observe`, a first pass over the records), then fixed
 * (`columns`) to type each row of the second pass (`row`).
 */
export class TableLayout {
  private readonly slots = new Map<string, Slot>();
  /** The slots in column order, fixed by the first row. */
  private fixed: Slot[] | undefined;

  constructor(shapes: ModelShape[]) {
    for (const [name, type] of INVOCATION_COLUMNS) this.slots.set(name, { key: { name, source: 'invocation' }, type, fixed: true });
    for (const [key, type] of FEEDBACK_COLUMNS) this.slots.set(key.name, { key, type, fixed: true });
    for (const shape of shapes) for (const { type, ...key } of declaredColumns(shape)) this.meet(key, type);
  }

  observe(cells: Cell[]): void {
    for (const { value, ...key } of cells) this.meet(key, typeOfValue(value));
  }

  /** The columns in order: the invocation's, then inputs, outputs, explanations by position, feedback; each family in the order met. */
  columns(): TableColumn[] {
    return this.ordered().map((slot) => ({ ...slot.key, type: typeName(settled(slot.type)), nullable: !REQUIRED_COLUMNS.has(slot.key.name) }));
  }

  /** A record's cells as a row of every column, typed, in column order; absent cells are null. Call once every record was observed. */
  row(cells: Cell[]): TableRow {
    this.fixed ??= this.ordered();
    const values = new Map(cells.map((cell) => [cell.name, cell.value]));
    const row: TableRow = {};
    for (const slot of this.fixed) row[slot.key.name] = cellValue(values.get(slot.key.name), settled(slot.type));
    return row;
  }

  private ordered(): Slot[] {
    const rank = (slot: Slot) => FAMILY_ORDER.indexOf(slot.key.source) * 1000 + (slot.key.position ?? 0);
    return [...this.slots.values()].map((slot, index) => ({ slot, index })).sort((a, b) => rank(a.slot) - rank(b.slot) || a.index - b.index).map(({ slot }) => slot);
  }

  private meet(key: ColumnKey, type: ColumnType): void {
    const slot = this.slots.get(key.name);
    if (slot && !slot.fixed) slot.type = widen(slot.type, type);
    else if (!slot) this.slots.set(key.name, { key, type });
  }
}
