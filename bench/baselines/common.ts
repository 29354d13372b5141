// What the baselines of the bench's queue comparison share: the table shaped
// like the platform's `invocations` they write, the model call, and how a
// baseline process starts and stops. Each baseline is a small program a team
// would write by hand, run as its own process like the platform's servers:
// DATABASE_URL and DIDYMA_AMQP_URL come from the environment the bench gives
// every process, the rest from the command line.
import type { Server } from 'node:http';
import pg from 'pg';
import { toInferenceRequest } from '../../infra/connectors/open-inference/tensors.js';

/** The platform's default pool size (DATABASE_POOL_MAX): the baselines get as many connections. */
export const POOL_MAX = 10;

/** The baselines' own table: the columns of `invocations` a queued call needs, no foreign keys, a partial index for the claim. */
export const BASELINE_TABLE_SQL = `
create schema if not exists baseline;
create table if not exists baseline.invocations (
  id uuid primary key,
  workspace_id integer not null,
  session_id uuid not null,
  user_id integer not null,
  model_id integer not null,
  type text not null,
  request_type text not null,
  body text not null,
  status text not null check (status in ('QUEUED', 'IN_PROGRESS', 'COMPLETED', 'ERROR')),
  response text not null default '',
  error text,
  priority integer not null default 0,
  attempts integer not null default 0,
  lease_expires_at timestamptz,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  completed_at timestamptz
);
create index if not exists baseline_invocations_queued on baseline.invocations (created_at, id) where status = 'QUEUED';`;

export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: the bench starts each baseline with the run database in it.');
  return url;
}

export function amqpUrl(): string {
  const url = process.env.DIDYMA_AMQP_URL;
  if (!url) throw new Error('DIDYMA_AMQP_URL is not set: the bench starts each baseline with the run broker in it.');
  return url;
}

export const newPool = () => new pg.Pool({ connectionString: databaseUrl(), max: POOL_MAX });

/** The positional argument `index` of the command line, or a usage error naming it. */
export function argument(index: number, name: string): string {
  const value = process.argv[2 + index];
  if (value === undefined || value === '') throw new Error(`missing argument ${index + 1}: ${name}`);
  return value;
}

/**
 * The model call the platform's executor makes: the invocation's body as an
 * Open Inference request to `inferUrl`; the response text is the result.
 */
export async function callModel(inferUrl: string, body: string): Promise<string> {
  const reply = await fetch(inferUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(toInferenceRequest(body)) });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`model server answered ${reply.status}`);
  return text;
}

/** Closes `server` and then `close` on SIGTERM, as the bench stops every child. */
export function stopOnSigterm(server: Server | undefined, close: () => Promise<unknown>): void {
  process.once('SIGTERM', () => {
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    void closed.then(close).finally(() => process.exit(0));
  });
}
