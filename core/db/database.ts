import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import { Model } from 'objection';
import { migrationSource } from './migrations/index.js';

export type Db = Knex;
export type Tx = Knex.Transaction;
/** Any query runner: the database itself or an open transaction. */
export type Runner = Knex | Knex.Transaction;

// BIGINT counts (count(*)) as numbers; our ids are 32-bit serials.
pg.types.setTypeParser(20, (value) => Number(value));

export interface DatabaseOptions {
  /** PostgreSQL URL; when absent the embedded PGlite is used. */
  url?: string;
  /** PGlite data folder; absent with no url means in memory (tests). */
  pgliteDir?: string;
  poolMax?: number;
}

export function createDatabase(options: DatabaseOptions): Db {
  const db = options.url ? postgres(options.url, options.poolMax ?? 10) : pglite(options.pgliteDir);
  Model.knex(db);
  return db;
}

function postgres(url: string, poolMax: number): Db {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, connectionTimeoutMillis: 3000, statement_timeout: 15000 } as Knex.PgConnectionConfig,
    pool: { min: 0, max: poolMax, acquireTimeoutMillis: 5000, idleTimeoutMillis: 10000 },
    acquireConnectionTimeout: 5000,
  });
}

function pglite(dir: string | undefined): Db {
  if (dir) fs.mkdirSync(path.dirname(path.resolve(dir)), { recursive: true });
  return knexFactory({
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection: dir ? { filename: dir } : {},
  } as Knex.Config);
}

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

export async function pingDatabase(db: Db): Promise<void> {
  await db.raw('select 1');
}
