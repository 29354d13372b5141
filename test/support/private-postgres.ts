import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import knexFactory, { type Knex } from 'knex';

// A PostgreSQL server of one test's own, for a test that stops or crashes the
// database under load: every other test file shares the server of
// scripts/services/postgres.sh, so that one must keep running. It is that
// same script, with the same settings, run on a state folder and a port of
// its own: installed, initialised and provisioned the same way, reused by the
// next run (the script's start is a no-op when the cluster already runs).
// One setting differs, as production has it: synchronous_commit on. The test
// cluster acknowledges a commit before its WAL is written, which a crash may
// then lose: a 201 whose row is gone would be the cluster's loss, not the
// platform's.

/** Beside the shared services' port (55432), reserved from the ephemeral range by the script like it. */
export const PRIVATE_POSTGRES_PORT = 55433;
const SCRIPT = path.resolve('scripts/services/postgres.sh');
/** Generous: a loaded machine, and a first run that initialises the cluster. */
const SCRIPT_TIMEOUT_MS = 180_000;

export interface PrivatePostgres {
  /** A fresh database of this server, for `DATABASE_URL`. */
  url: string;
  /** A fast shutdown (clients' sessions ended, a checkpoint), `downMs` with no server, then a start. */
  restart(downMs: number): Promise<void>;
  /** An immediate shutdown, as a crash leaves it (no checkpoint), `downMs` with no server, then a start that recovers. */
  crash(downMs: number): Promise<void>;
  /** Drops the database and stops the server. */
  close(): Promise<void>;
}

/** The state folder of the private server, beside the shared services' (DIDYMA_SERVICES_DIR). */
function stateDir(): string {
  const services = process.env.DIDYMA_SERVICES_DIR ?? path.join(process.env.HOME ?? os.homedir(), '.cache/didyma/services');
  return path.join(services, 'private');
}

/** Runs the script on the private server; fails with what it printed. */
function script(action: 'start' | 'stop' | 'crash' | 'env'): Promise<string> {
  const env = { ...process.env, DIDYMA_SERVICES_DIR: stateDir(), DIDYMA_PG_PORT: String(PRIVATE_POSTGRES_PORT) };
  return new Promise((resolve, reject) => {
    execFile('bash', [SCRIPT, action], { env, timeout: SCRIPT_TIMEOUT_MS }, (error, stdout, stderr) =>
      error ? reject(new Error(`postgres.sh ${action} of the private server (${stateDir()}, port ${PRIVATE_POSTGRES_PORT}) failed: ${stderr || error.message}`)) : resolve(stdout),
    );
  });
}

const DATABASE_PREFIX = 'dy_private_';

/** Drops the databases of test processes that are gone: an interrupted run leaves its own behind. */
async function dropLeftovers(admin: Knex): Promise<void> {
  const { rows } = (await admin.raw('select datname from pg_database where datname like ?', [`${DATABASE_PREFIX}%`])) as { rows: Array<{ datname: string }> };
  for (const { datname } of rows) {
    const pid = Number(datname.slice(DATABASE_PREFIX.length).split('_')[0]);
    if (!processRuns(pid)) await admin.raw(`drop database if exists ${datname} with (force)`);
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Starts (or reuses) the private server and makes a database of its own on it. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  await script('start');
  const serverUrl = /TEST_DATABASE_URL=(\S+)/.exec(await script('env'))?.[1];
  if (!serverUrl) throw new Error('postgres.sh env printed no TEST_DATABASE_URL');
  const name = `${DATABASE_PREFIX}${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('alter system set synchronous_commit = on');
    await admin.raw('select pg_reload_conf()');
    await dropLeftovers(admin);
    await admin.raw(`create database ${name}`);
  } catch (error) {
    await admin.destroy();
    throw error;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const outage = async (stop: 'stop' | 'crash', downMs: number) => {
    await script(stop);
    await sleep(downMs);
    await script('start');
  };
  return {
    url: url.toString(),
    restart: (downMs) => outage('stop', downMs),
    crash: (downMs) => outage('crash', downMs),
    async close() {
      try {
        await script('start'); // a test that failed mid-outage leaves it stopped
        await admin.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.destroy();
        await script('stop');
      }
    },
  };
}
