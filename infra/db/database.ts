import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
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
  /** PEM of the CA that signed the server's certificate: TLS with the certificate and host name checked (verify-full). */
  ca?: string;
  /** `transaction`: `url` goes through a transaction-pooling PgBouncer, which keeps nothing of a connection between transactions. */
  pooler?: 'none' | 'transaction';
  /** The change feed's LISTEN connection: a URL of its own (a direct one past the pooler), `off` for none; absent: `url`. */
  listen?: string | 'off';
}

/** How to reach a PostgreSQL server outside of the pool: its URL and its TLS settings. */
export interface ServerConnection {
  connectionString: string;
  ssl?: { ca: string; rejectUnauthorized: true };
}

interface ServerInfo {
  connection: ServerConnection;
  listen: ServerConnection | undefined;
  pooled: boolean;
}

const servers = new WeakMap<Db, ServerInfo>();
/** Each database by its client's config, which its transactions share (rootOf). */
const roots = new WeakMap<object, Db>();

export function createDatabase(options: DatabaseOptions): Db {
  const pooled = options.pooler === 'transaction';
  const connection = options.url ? serverConnection(options.url, options.ca) : undefined;
  const db = connection ? postgres(connection, options.poolMax ?? 10, pooled) : pglite(options.pgliteDir);
  if (connection) {
    const listen = options.listen === 'off' ? undefined : options.listen ? serverConnection(options.listen, options.ca) : connection;
    servers.set(db, { connection, listen, pooled });
  }
  roots.set(db.client.config as object, db);
  return db;
}

/**
 * A URL with the TLS of a CA file: the URL's own `ssl*` parameters are
 * dropped, since node-postgres lets them override the explicit settings.
 */
export function serverConnection(url: string, ca: string | undefined): ServerConnection {
  if (!ca) return { connectionString: url };
  const parsed = new URL(url);
  for (const key of [...parsed.searchParams.keys()]) if (/^ssl/i.test(key)) parsed.searchParams.delete(key);
  return { connectionString: parsed.toString(), ssl: { ca, rejectUnauthorized: true } };
}

/** The database a runner belongs to (itself, or the one a transaction was opened on); undefined when createDatabase did not make it. */
export function rootOf(runner: Runner): Db | undefined {
  return roots.get(runner.client.config as object);
}

/** The PostgreSQL URL a database was created with; undefined for the embedded PGlite. */
export function serverUrlOf(db: Db): string | undefined {
  return servers.get(db)?.connection.connectionString;
}

/** The connection of the change feed's LISTEN: undefined for PGlite and when LISTEN is off. */
export function listenConnectionOf(db: Db): ServerConnection | undefined {
  return servers.get(db)?.listen;
}

/** Whether a runner's statements go through a transaction pooler, where a named prepared statement may meet a server connection that never saw it. */
export function isTransactionPooled(runner: Runner): boolean {
  const db = rootOf(runner);
  return db !== undefined && servers.get(db)?.pooled === true;
}

/**
 * Startup options of every direct connection to PostgreSQL: no JIT. Its trigger is the
 * planner's cost estimate, which the claim's CTEs overestimate, and compiling
 * took 91 of a claim's 110 ms at every execution (docs/decisions.md). PgBouncer
 * refuses startup parameters it does not track: behind one, the runtime role carries them.
 */
const NO_JIT = '-c jit=off';
const STATEMENT_TIMEOUT_MS = 15000;

function postgres(server: ServerConnection, poolMax: number, pooled: boolean): Db {
  const startup = pooled ? {} : { statement_timeout: STATEMENT_TIMEOUT_MS, options: NO_JIT };
  return knexFactory({
    client: 'pg',
    connection: { ...server, connectionTimeoutMillis: 3000, ...startup } as Knex.PgConnectionConfig,
    pool: { min: 0, max: poolMax, acquireTimeoutMillis: 5000, idleTimeoutMillis: 10000 },
    acquireConnectionTimeout: 5000,
    // Connection failures reach the callers as query errors (503 with Retry-After, executor retries);
    // knex's own console copies of them, with stacks, only flood the output during an outage.
    log: { warn: (message: string) => void (/^(Acquire connection error|Connection Error): /.test(message) || console.warn(message)) },
  });
}

function pglite(dir: string | undefined): Db {
  if (dir) fs.mkdirSync(path.dirname(path.resolve(dir)), { recursive: true });
  return knexFactory({
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection: dir ? { filename: dir } : {},
    postProcessResponse: countOfDelete,
  } as Knex.Config);
}

/** PGlite's raw result of a statement: what knex-pglite hands back for a DELETE without `returning`. */
interface PgliteResult {
  command?: string;
  affectedRows?: number;
  rows?: unknown[];
}

/**
 * A DELETE without `returning` answers the number of rows it removed, as knex
 * answers on PostgreSQL: knex-pglite leaves PGlite's raw result instead, and a
 * store checking `> 0` would then take every delete for a hit.
 */
export function countOfDelete(result: unknown): unknown {
  const raw = result as PgliteResult | null;
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && raw.command === 'DEL' && typeof raw.affectedRows === 'number') return raw.affectedRows;
  return result;
}

export interface MigrateOptions {
  /** Called, and awaited, each time another run holds the migration lock, before waiting for it. */
  onLocked?: () => void | Promise<void>;
  /** How long to wait for another run's lock before failing. */
  lockWaitMs?: number;
}

const LOCK_RETRY_MS = 2000;

/**
 * Applies the pending migrations; their names. knex's lock keeps two runs
 * (the migration Jobs of two revisions applied at once) from both migrating,
 * but fails the second at once: it waits for the first to finish instead.
 */
export async function migrateLatest(db: Db, options: MigrateOptions = {}): Promise<string[]> {
  const deadline = Date.now() + (options.lockWaitMs ?? 300_000);
  for (;;) {
    try {
      const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
      return applied;
    } catch (error) {
      if ((error as Error).name !== 'MigrationLocked' || Date.now() >= deadline) throw error;
      await options.onLocked?.();
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
}

/**
 * Lets `role` read and write the rows of every table of the current schema and
 * use its sequences, now and in the tables later migrations of this user
 * create, and nothing more: the runtime user of a deployment whose migration
 * user owns the schema. Granting again is harmless, so every migrate does it.
 */
export async function grantRuntimeRole(db: Db, role: string): Promise<void> {
  await db.transaction(async (trx) => {
    const { rows } = (await trx.raw('select current_schema() as schema')) as { rows: { schema: string }[] };
    const schema = rows[0]!.schema;
    await trx.raw('grant usage on schema ?? to ??', [schema, role]);
    await trx.raw('grant select, insert, update, delete on all tables in schema ?? to ??', [schema, role]);
    await trx.raw('grant usage, select, update on all sequences in schema ?? to ??', [schema, role]);
    await trx.raw('alter default privileges in schema ?? grant select, insert, update, delete on tables to ??', [schema, role]);
    await trx.raw('alter default privileges in schema ?? grant usage, select, update on sequences to ??', [schema, role]);
  });
}

/** Whether an error means the database cannot be reached right now (down, restarting, out of connections), not that the query is wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = (error ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  const codes = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08003', '08006', '53300'];
  if (typeof e.code === 'string' && codes.includes(e.code)) return true;
  return e.name === 'KnexTimeoutError' || /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(String(e.message ?? ''));
}

/** Whether PostgreSQL rolled the statement back to break a deadlock or a serialization conflict: running it again is safe. */
export function isRolledBackConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

export async function pingDatabase(db: Db): Promise<void> {
  await db.raw('select 1');
}
