// Baseline "naive executor" of the bench's queue comparison: a FIFO claim loop
// a team would write by hand. Up to 8 calls in flight (the platform
// executor's default concurrency); whenever slots are free, one
// `FOR UPDATE SKIP LOCKED LIMIT <free slots>` claim in arrival order, each
// claimed row's model call, then its completion written by one UPDATE.
//
// `baseline` claims from the baselines' own table. `platform WORKSPACE_ID`
// claims, in FIFO order, the queued rows of one workspace from the platform's
// own `invocations` table, writing what the platform's fair claim and
// completion write (status, lease, attempt record; completions gathered into
// one statement while the last is in flight, as the platform's executor
// does) but nothing of the fair order: the bench sets the platform's
// executor against it on the same rows, for what fairness itself costs.
// usage: node --import tsx bench/baselines/naive-executor.ts PORT INFER_URL baseline
//        node --import tsx bench/baselines/naive-executor.ts PORT INFER_URL platform WORKSPACE_ID
import express from 'express';
import { argument, callModel, newPool, stopOnSigterm } from './common.js';

const CONCURRENCY = 8; // the platform executor's default (DIDYMA_EXECUTOR_CONCURRENCY)
const IDLE_POLL_MS = 100;
const LEASE_MS = 60_000;

interface Statements {
  claim: string;
  claimBindings: (limit: number) => unknown[];
  /** One completion ($1 id, $2 attempts, $3 response); or, with `gathered`, many ($1 a JSON list of {id, attempts, response}). */
  complete: string;
  gathered?: boolean;
  fail: string;
}

const BASELINE: Statements = {
  claim: `update baseline.invocations as i
             set status = 'IN_PROGRESS', started_at = now(), lease_expires_at = now() + $2 * interval '1 millisecond', attempts = i.attempts + 1
           where i.id in (select id from baseline.invocations where status = 'QUEUED' order by created_at, id limit $1 for update skip locked)
          returning i.id, i.body, i.attempts`,
  claimBindings: (limit) => [limit, LEASE_MS],
  complete: `update baseline.invocations set status = 'COMPLETED', response = $3, lease_expires_at = null, completed_at = now() where id = $1 and attempts = $2 and status = 'IN_PROGRESS'`,
  fail: `update baseline.invocations set status = 'ERROR', error = $3, lease_expires_at = null, completed_at = now() where id = $1 and attempts = $2 and status = 'IN_PROGRESS'`,
};

/** The FIFO claim on the platform's table: the fair claim's writes (CLAIM_SQL, COMPLETE_SQL) without its order. */
const platform = (workspaceId: number): Statements => ({
  claim: `with claimed as (
            update invocations as i
               set status = 'IN_PROGRESS', started_at = now(), lease_expires_at = now() + $3 * interval '1 millisecond', attempts = i.attempts + 1, available_at = null
             where i.id in (select id from invocations where status = 'QUEUED' and workspace_id = $1 order by created_at, id limit $2 for update skip locked)
            returning i.id, i.body, i.attempts, i.started_at
          ),
          recorded as (
            insert into invocation_attempts (invocation_id, attempt, executor, started_at)
            select id, attempts, 'bench-fifo', started_at from claimed
            on conflict do nothing
          )
          select id, body, attempts from claimed`,
  claimBindings: (limit) => [workspaceId, limit, LEASE_MS],
  complete: `with completions as (select * from jsonb_to_recordset($1::jsonb) as v(id uuid, attempts integer, response text)),
             done as (
               update invocations as i set status = 'COMPLETED', response = v.response, error = null, lease_expires_at = null, completed_at = now()
                 from completions as v
                where i.id = v.id and i.attempts = v.attempts and i.status = 'IN_PROGRESS' returning i.id, i.attempts
             )
             update invocation_attempts as a set ended_at = now(), outcome = 'COMPLETED' from done
              where a.invocation_id = done.id and a.attempt = done.attempts and a.ended_at is null`,
  gathered: true,
  fail: `with done as (
           update invocations set status = 'ERROR', error = $3, response = '', lease_expires_at = null, completed_at = now()
            where id = $1 and attempts = $2 and status = 'IN_PROGRESS' returning id, attempts
         )
         update invocation_attempts as a set ended_at = now(), outcome = 'ERROR' from done
          where a.invocation_id = done.id and a.attempt = done.attempts and a.ended_at is null`,
});

const port = Number(argument(0, 'PORT'));
const inferUrl = argument(1, 'INFER_URL');
const table = argument(2, 'baseline or platform');
const statements = table === 'baseline' ? BASELINE : table === 'platform' ? platform(Number(argument(3, 'WORKSPACE_ID'))) : undefined;
if (!statements) throw new Error(`the table must be baseline or platform, not ${JSON.stringify(table)}`);

const pool = newPool();
let inFlight = 0;
let stopping = false;
let wake: () => void = () => undefined;

interface Completion {
  id: string;
  attempts: number;
  response: string;
}

const waiting: Array<Completion & { written: () => void }> = [];
let writing = false;

/** Writes the completions waiting, in one statement, again and again while more arrive during a write. */
async function writeGathered(): Promise<void> {
  if (writing) return;
  writing = true;
  while (waiting.length) {
    const batch = waiting.splice(0);
    await pool.query(statements!.complete, [JSON.stringify(batch.map(({ id, attempts, response }) => ({ id, attempts, response })))]).catch(() => undefined);
    for (const each of batch) each.written();
  }
  writing = false;
}

const complete = (completion: Completion): Promise<unknown> =>
  statements!.gathered
    ? new Promise<void>((written) => {
        waiting.push({ ...completion, written });
        void writeGathered();
      })
    : pool.query(statements!.complete, [completion.id, completion.attempts, completion.response]);

async function run(row: { id: string; body: string; attempts: number }): Promise<void> {
  try {
    const response = await callModel(inferUrl, row.body);
    await complete({ id: row.id, attempts: row.attempts, response });
  } catch (error) {
    await pool.query(statements!.fail, [row.id, row.attempts, String(error).slice(0, 1000)]).catch(() => undefined);
  } finally {
    inFlight--;
    wake();
  }
}

/** Claims while slots are free; sleeps until a run ends, or polls when nothing was queued. */
async function claimLoop(): Promise<void> {
  while (!stopping) {
    const free = CONCURRENCY - inFlight;
    const rows = free > 0 ? (await pool.query<{ id: string; body: string; attempts: number }>(statements!.claim, statements!.claimBindings(free)).catch(() => ({ rows: [] }))).rows : [];
    for (const row of rows) {
      inFlight++;
      void run(row);
    }
    if (free > 0 && rows.length === free) continue;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, IDLE_POLL_MS);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

const app = express();
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(port, '127.0.0.1');
const looping = claimLoop();
stopOnSigterm(server, async () => {
  stopping = true;
  wake();
  await looping;
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  await pool.end();
});
