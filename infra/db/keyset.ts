import type { Knex } from 'knex';
import { InputError } from '../../kernel/errors/errors.js';

// Every list reads newest first, (created_at, id) descending, and a page
// continues after the last row of the one before it (a keyset) rather than
// skipping `offset` rows, so a deep page costs what the first one does on the
// indexes of migration 0008. The cursor keeps created_at to the microsecond,
// as PostgreSQL stores it: a JavaScript Date would round it to the
// millisecond and skip or repeat rows created in the same millisecond.

/** Where a page starts: after the row with this created_at (ISO, microseconds, UTC) and id. */
export interface Cursor {
  at: string;
  id: string | number;
}

/** One page of a list: its size, rows to skip, where it starts, and the creation window. */
export interface Page {
  limit: number;
  offset: number;
  after?: Cursor;
  createdAfter?: string;
  createdBefore?: string;
}

export interface PageOfRows<Row> {
  rows: Row[];
  /** Rows the filters select, the page aside. */
  total: number;
  /** Where the next page starts; absent on the last page. */
  next?: Cursor;
}

/** How a table is paged: the columns of its key and the type of its id. */
export interface Keyset {
  table: string;
  idType: 'integer' | 'uuid';
  /** The creation column, `created_at` unless named. */
  createdAt?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` can be compared with a uuid column without PostgreSQL refusing the statement. */
export const isUuid = (value: string) => UUID.test(value);
const CURSOR_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CURSOR_COLUMN = 'page_cursor_at';
const MAX_INTEGER_ID = 2147483647; // PostgreSQL's integer

export const badCursor = () =>
  new InputError("after: not a cursor of this list; follow the Link header's next URL.", [{ field: 'after', message: 'is not a cursor of this list' }]);

/** A cursor's shape, whichever list it came from; the id's type is checked against the list's. */
export function isCursor(value: unknown): value is Cursor {
  const cursor = value as Partial<Cursor> | null;
  if (typeof cursor?.at !== 'string' || !CURSOR_AT.test(cursor.at) || !(Date.parse(cursor.at) >= 0)) return false;
  return (typeof cursor.id === 'number' && Number.isSafeInteger(cursor.id) && cursor.id >= 0) || (typeof cursor.id === 'string' && UUID.test(cursor.id));
}

/**
 * Reads one page of `query` (already filtered by tenant and by the list's
 * own filters) newest first, with the count of every row the filters select:
 * `knownTotal` when the caller keeps it (migration 0009), else COUNT(*).
 */
export async function keysetPage<Row extends { id: string | number }>(query: Knex.QueryBuilder, page: Page, keyset: Keyset, knownTotal?: number): Promise<PageOfRows<Row>> {
  const createdAt = `${keyset.table}.${keyset.createdAt ?? 'created_at'}`;
  const id = `${keyset.table}.id`;
  if (page.createdAfter) query.where(createdAt, '>', page.createdAfter);
  if (page.createdBefore) query.where(createdAt, '<', page.createdBefore);
  const counted = knownTotal === undefined ? query.clone().clearSelect().count('* as n').first() : Promise.resolve({ n: knownTotal });
  const paged = query
    .clone()
    .select(`${keyset.table}.*`)
    .select(query.client.raw(`to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ${CURSOR_COLUMN}`, [createdAt]))
    .orderBy([{ column: createdAt, order: 'desc' }, { column: id, order: 'desc' }])
    .limit(page.limit + 1)
    .offset(page.offset);
  if (page.after) {
    if (page.after.id !== idOfType(page.after.id, keyset.idType)) throw badCursor();
    paged.whereRaw(`(??, ??) < (?::timestamptz, ?::${keyset.idType})`, [createdAt, id, page.after.at, page.after.id]);
  }
  const [found, count] = await Promise.all([paged as Promise<Array<Row & Record<typeof CURSOR_COLUMN, string>>>, counted as Promise<{ n: number | string }>]);
  const rows = found.slice(0, page.limit).map(({ [CURSOR_COLUMN]: _at, ...row }) => row as unknown as Row);
  const last = found.length > page.limit ? found[page.limit - 1] : undefined;
  return { rows, total: Number(count.n), ...(last && { next: { at: last[CURSOR_COLUMN], id: last.id } }) };
}

/** The id as the list's type, or undefined: a uuid cursor on a list of integer ids is someone else's. */
function idOfType(id: string | number, type: Keyset['idType']): string | number | undefined {
  if (type === 'integer') return typeof id === 'number' && id <= MAX_INTEGER_ID ? id : undefined;
  return typeof id === 'string' ? id : undefined;
}
