import type { Knex } from 'knex';
import { isTransactionPooled, type Runner } from './database.js';

/**
 * A hot statement as a named prepared statement (knex hands the `name` option
 * on to pg): PostgreSQL parses it once per connection and keeps a generic plan
 * after five runs, instead of planning the same text on every call. The name
 * must stand for one text only, so `sql` is a module constant. Lists go in as
 * one JSON parameter, never as an array whose length a custom plan would see.
 * PGlite ignores the name. Behind a transaction pooler the next statement
 * may meet a server connection that never prepared it, so there it goes unnamed.
 */
export async function prepared<Row>(db: Runner, name: string, sql: string, bindings: readonly Knex.RawBinding[]): Promise<Row[]> {
  const query = db.raw(sql, bindings);
  const result = (await (isTransactionPooled(db) ? query : query.options({ name }))) as { rows: Row[] };
  return result.rows;
}

/** A list of uuids passed as one JSON parameter, as the array `= any(…)` takes. */
export const JSON_UUIDS = 'array(select jsonb_array_elements_text(?::jsonb)::uuid)';
