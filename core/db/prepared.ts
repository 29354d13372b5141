import type { Knex } from 'knex';
import type { QueryResult, QueryResultRow } from 'pg';
import { isEmbedded, type Runner } from './database.js';

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
 *
 * Outside a transaction on PostgreSQL, the statement goes straight to a
 * connection of knex's pool: for these fixed texts, knex's query builder, its
 * copy of the bindings and its events took more of the public server's and
 * the executor's time than pg itself (V8 profiles at 450/s,
 * docs/benchmarks.md). The statements write no table the change feed
 * watches, so its `query` event has nothing to see. In a transaction, and on
 * PGlite (which ignores the name), knex runs it.
 */
export async function prepared<Row extends QueryResultRow = QueryResultRow>(
  db: Runner,
  name: string,
  sql: string,
  bindings: readonly Knex.RawBinding[],
  /** Called once the statement has been handed to its connection (see InvocationsService.invoke). */
  sent?: () => void,
): Promise<Pick<QueryResult<Row>, 'rows'>> {
  if (db.isTransaction || isEmbedded(db)) {
    const running = db.raw(sql, bindings).options({ name }).then((result) => result as QueryResult<Row>);
    sent?.();
    return running;
  }
  const client = db.client as PoolClient;
  const connection = await client.acquireConnection();
  try {
    const running = connection.query<Row>({ name, text: numbered(name, sql), values: bindings as unknown[] });
    sent?.();
    return await running;
  } finally {
    await client.releaseConnection(connection);
  }
}

/** A list of uuids passed as one JSON parameter (see above), as the array `= any(…)` takes. */
export const JSON_UUIDS = 'array(select jsonb_array_elements_text(?::jsonb)::uuid)';

interface PoolClient {
  acquireConnection(): Promise<{ query<Row extends QueryResultRow>(config: { name: string; text: string; values: unknown[] }): Promise<QueryResult<Row>> }>;
  releaseConnection(connection: unknown): Promise<void>;
}

const texts = new Map<string, string>();

/** knex's `?` placeholders as PostgreSQL's `$1, $2…`, once per statement. */
export function numbered(name: string, sql: string): string {
  let text = texts.get(name);
  if (text === undefined) {
    if (/\\\?|\?\?/.test(sql)) throw new Error(`Prepared statement ${name}: escaped placeholders and identifier bindings are not supported.`);
    let count = 0;
    text = sql.replace(/\?/g, () => `$${++count}`);
    texts.set(name, text);
  }
  return text;
}
