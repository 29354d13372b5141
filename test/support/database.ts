import crypto from 'node:crypto';
import knexFactory from 'knex';
import { createDatabase, migrateLatest, type Db } from '../../infra/db/database.js';

/**
 * One migrated database per test process: a fresh PostgreSQL database on the
 * server named by TEST_DATABASE_URL (make test), else an in-memory PGlite
 * (npm test). Tests make their own users and workspaces with unique names, so
 * they never depend on an empty database.
 */
let shared: Promise<{ db: Db; url?: string; drop: () => Promise<void> }> | undefined;

export function sharedDatabase(): Promise<Db> {
  shared ??= open();
  return shared.then((s) => s.db);
}

/** The URL of the shared PostgreSQL test database, for child processes (PostgreSQL runs only). */
export async function sharedDatabaseUrl(): Promise<string> {
  await sharedDatabase();
  const url = (await shared!).url;
  if (!url) throw new Error('This test needs PostgreSQL: set TEST_DATABASE_URL (make test starts it with scripts/services/postgres.sh).');
  return url;
}

export async function closeSharedDatabase(): Promise<void> {
  if (!shared) return;
  const s = await shared;
  shared = undefined;
  await s.drop();
}

export const usingPostgres = () => Boolean(process.env.TEST_DATABASE_URL);

/**
 * A migrated database of its own, for a test that acts on every row of its
 * kind (the cluster resync applies every live deployment): the shared one
 * holds what every earlier test file made. Drop it when done.
 */
export function ownDatabase(): Promise<{ db: Db; drop: () => Promise<void> }> {
  return open();
}

async function open() {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const db = createDatabase({});
    await migrateLatest(db);
    return { db, drop: () => db.destroy() };
  }
  const name = `dy_test_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`create database ${name}`);
  } catch (error) {
    await admin.destroy();
    throw new Error(`Cannot create a test database on TEST_DATABASE_URL (${(error as Error).message}); start it with scripts/services/postgres.sh start`);
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  const db = createDatabase({ url: target.toString(), poolMax: 10 });
  await migrateLatest(db);
  return {
    db,
    url: target.toString(),
    drop: async () => {
      await db.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}
