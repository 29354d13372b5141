import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { requireEnv } from './services.js';

/**
 * A database of its own on the shared PostgreSQL, as a managed one is set up:
 * owned by the migration user (scripts/services/postgres.sh's
 * didyma_migrator), used by the runtime user (didyma_runtime) directly or
 * through the transaction-pooling PgBouncer of scripts/services/pgbouncer.sh,
 * every connection over TLS checked against the server's CA.
 */
export interface PooledDatabase {
  name: string;
  /** The migration user, directly: what `didyma migrate` runs with. */
  migrationUrl: string;
  /** The runtime user through PgBouncer (transaction pooling). */
  pooledUrl: string;
  /** The runtime user directly: the change feed's LISTEN. */
  directUrl: string;
  /** The CA file every connection checks the server's certificate against. */
  caFile: string;
  drop(): Promise<void>;
}

/** `url` with the database `name` in place of its own. */
const onDatabase = (url: string, name: string) => {
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
};

export async function createPooledDatabase(): Promise<PooledDatabase> {
  const adminUrl = requireEnv('TEST_DATABASE_URL', 'postgres');
  const migrationUrl = requireEnv('TEST_DATABASE_MIGRATION_URL', 'postgres');
  const runtimeUrl = requireEnv('TEST_DATABASE_RUNTIME_URL', 'postgres');
  const caFile = requireEnv('TEST_DATABASE_CA_FILE', 'postgres');
  const pooledUrl = requireEnv('TEST_PGBOUNCER_URL', 'pgbouncer');
  const migrator = new URL(migrationUrl).username;
  const name = `dy_pooled_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name} owner ${migrator}`);
  return {
    name,
    migrationUrl: onDatabase(migrationUrl, name),
    pooledUrl: onDatabase(pooledUrl, name),
    directUrl: onDatabase(runtimeUrl, name),
    caFile,
    async drop() {
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

/** The LISTEN connections of the change feed open on a database, each with whether it uses TLS. */
export async function listenersOn(name: string): Promise<Array<{ usename: string; ssl: boolean }>> {
  const admin = knexFactory({ client: 'pg', connection: requireEnv('TEST_DATABASE_URL', 'postgres'), pool: { min: 0, max: 1 } });
  try {
    const { rows } = (await admin.raw(
      `select a.usename, s.ssl from pg_stat_activity a join pg_stat_ssl s using (pid)
        where a.datname = ? and a.query ilike 'listen %'`,
      [name],
    )) as { rows: Array<{ usename: string; ssl: boolean }> };
    return rows;
  } finally {
    await admin.destroy();
  }
}

/** A CA certificate that signed nothing the test services present, in a file of its own. */
export function strangerCaFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-stranger-ca-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-keyout', path.join(dir, 'ca.key'), '-out', path.join(dir, 'ca.crt'), '-subj', '/CN=stranger-ca'], { stdio: 'ignore' });
  return path.join(dir, 'ca.crt');
}
