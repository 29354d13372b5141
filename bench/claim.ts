// `npm run bench:claim`: what the executor's fair claim statement (CLAIM_SQL)
// costs as the number of workspaces with queued work grows, with nothing else
// running: the same invocations (BENCH_CLAIM_TOTAL, 6000) spread over each
// count of workspaces (BENCH_CLAIM_SIZES, 1,10,100,1000), then
// BENCH_CLAIM_CLAIMS (150) claims of BENCH_CLAIM_LIMIT (16) rows, each
// completing the previous claim's rows so the calls in flight stay at the
// limit, made by BENCH_CLAIM_CLAIMERS (1) claimers at once, as that many
// executors would: the claims a second they make together is the ceiling
// of the executors' drain.
// Writes bench/results/claim-<date>.json; nothing here is a test.
//
// Environment: TEST_DATABASE_URL (scripts/services/all.sh env postgres).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { queuedPredict, sessionIn, startIrisSession } from '../test/support/fixtures.js';
import { makeWorkspace, unique } from '../test/support/platform.js';
import { closeSharedDatabase } from '../test/support/database.js';
import { invocationState } from '../features/invocations/state.js';
import { percentile } from './lib/scale-report.js';

const env = (name: string, fallback: string) => process.env[name] || fallback;
const SIZES = env('BENCH_CLAIM_SIZES', '1,10,100,1000').split(',').map(Number);
const TOTAL = Number(env('BENCH_CLAIM_TOTAL', '6000'));
const LIMIT = Number(env('BENCH_CLAIM_LIMIT', '16'));
const CLAIMS = Number(env('BENCH_CLAIM_CLAIMS', '150'));
const CLAIMERS = Number(env('BENCH_CLAIM_CLAIMERS', '1'));
const LEASE_MS = 60_000;

async function main() {
  if (!process.env.TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set: eval "$(bash scripts/services/all.sh env postgres)" first.');
  const started = new Date();
  const iris = await startIrisSession(unique('v'));
  // Nothing but the claims under measurement moves rows.
  await iris.t.platform.sweeper.stop();
  const db = iris.t.platform.db;
  const rows = [];
  try {
    for (const size of SIZES) {
      const workspaces: number[] = [];
      for (let i = 0; i < size; i++) workspaces.push((await makeWorkspace(iris.t.platform)).id);
      const perWorkspace = Math.ceil(TOTAL / size);
      for (const workspaceId of workspaces) {
        const owner = { workspaceId, userId: iris.owner.user.id, modelId: iris.modelId };
        const sessionId = await sessionIn(db, owner);
        const queued = Array.from({ length: perWorkspace }, () => queuedPredict({ ...owner, sessionId }));
        await invocationState.appendQueued(db, queued);
      }
      await db.raw('analyze invocations');
      const ms: number[] = [];
      /** One executor's claims, each completing the rows of its previous one. */
      const claimer = async (claims: number) => {
        let previous: string[] = [];
        for (let claim = 0; claim < claims; claim++) {
          const start = performance.now();
          const { rows: claimed } = await invocationState.claimNext(db, LIMIT, LEASE_MS, 'bench:claim');
          ms.push(performance.now() - start);
          await invocationState.complete(db, previous.map((id, index) => ({ lease: { id, attempts: 1 }, response: String(index) })));
          previous = claimed.map((row) => row.id);
        }
      };
      const wall = performance.now();
      await Promise.all(Array.from({ length: CLAIMERS }, () => claimer(Math.ceil(CLAIMS / CLAIMERS))));
      const claimsPerSecond = ms.length / ((performance.now() - wall) / 1000);
      await db('invocations').whereIn('workspace_id', workspaces).delete();
      const row = { workspaces: size, perWorkspace, claimers: CLAIMERS, claimsPerSecond, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), meanMs: ms.reduce((a, b) => a + b, 0) / ms.length };
      console.log(`bench:claim ${size} workspaces × ${perWorkspace} queued: claim of ${LIMIT} p50 ${row.p50Ms.toFixed(1)} ms, p99 ${row.p99Ms.toFixed(1)} ms, mean ${row.meanMs.toFixed(1)} ms, ${CLAIMERS} at once: ${claimsPerSecond.toFixed(0)} claims/s`);
      rows.push(row);
    }
  } finally {
    await iris.close();
    await closeSharedDatabase();
  }
  const file = path.resolve('bench/results', `claim-${started.toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z')}.json`);
  const report = { date: started.toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg() }, settings: { total: TOTAL, limit: LIMIT, claims: CLAIMS, claimers: CLAIMERS }, rows };
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`bench:claim written to ${path.relative(process.cwd(), file)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
