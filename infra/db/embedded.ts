import type { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';

/** Whether the database is the embedded PGlite (one connection, one process) rather than a PostgreSQL server. */
export function isEmbedded(db: Knex): boolean {
  return db.client instanceof (ClientPgLite as unknown as typeof Knex.Client);
}
