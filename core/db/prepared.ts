import type { Knex } from 'knex';
import type { Runner } from './database.js';

/**
 * A hot statement run as a named prepared statement: PostgreSQL parses it once
 * per connection and, after five runs, keeps a generic plan, instead of
 * parsing and planning the same text on every call. On the executor's drain
 * this took about a quarter off the database's CPU per invocation (bench/).
 *
 * The name must stand for one text only (pg refuses a second text under a
 * known name), so `sql` is a module constant whose placeholders never vary in
 * number. Lists go in as one JSON parameter, never as a PostgreSQL array: a
 * custom plan sees how long an array is and, next to the generic plan's guess,
 * looks cheaper; PostgreSQL then plans the statement again on every run (a
 * third of its CPU on the executor's drain; `claims.test.ts` checks the plans).
 * PGlite ignores the name.
 */
export function prepared(db: Runner, name: string, sql: string, bindings: readonly Knex.RawBinding[]): Knex.Raw {
  return db.raw(sql, bindings).options({ name });
}

/** A list of uuids passed as one JSON parameter (see above), as the array `= any(…)` takes. */
export const JSON_UUIDS = 'array(select jsonb_array_elements_text(?::jsonb)::uuid)';
