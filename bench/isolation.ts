// `npm run bench:isolation`: what each attack of docs/security.md's table of
// shared resources costs a quiet workspace. On `didyma dev`, and also on
// separate processes when TEST_DATABASE_URL and TEST_AMQP_URL are set, the
// quiet workspace's requests and every /healthz are timed one after the other
// for BENCH_ISOLATION_IDLE_MS with nothing else running, then during each
// attack; each row gives both p50 and p99 and the ratio of the p99s.
// Writes bench/results/isolation-<date>.json; nothing here is a test (the
// isolation suite checks that every request is served within its bound).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { devTarget, probeWhile, registerModel, separateTarget, workspaceOn, type Probe, type Target } from '../test/support/isolation.js';
import { admittedPatternChecks, costlyRegistration, passwordGuesses, quietPrediction, quietRequests, quietThreadCheck, slowReceiver, streamFlood, type Attack } from '../test/support/isolation-attacks.js';
import { unique } from '../test/support/platform.js';
import { closeSharedDatabase } from '../test/support/database.js';
import { percentile } from './lib/scale-report.js';

const IDLE_MS = Number(process.env.BENCH_ISOLATION_IDLE_MS || 5_000);

interface Figures {
  probes: number;
  p50Ms: number;
  p99Ms: number;
  refused: number;
}

const figures = (probes: Probe[]): Figures => ({
  probes: probes.length,
  p50Ms: percentile(probes.map((probe) => probe.ms), 50),
  p99Ms: percentile(probes.map((probe) => probe.ms), 99),
  refused: probes.filter((probe) => probe.status !== 200).length,
});

async function rowsOn(target: Target) {
  const [noisy, quiet] = [await workspaceOn(target), await workspaceOn(target)];
  const version = unique('quiet');
  await registerModel(target, quiet, version);
  const quietSide = [...quietRequests(target, quiet), await quietPrediction(target, quiet, version)];
  const attacks: Array<[string, () => Promise<Attack<unknown>>]> = [
    ['event loop: the issue’s pattern registered', async () => costlyRegistration(target, noisy)],
    ['event loop: 16 × 16,000 characters against the costliest admitted pattern', () => admittedPatternChecks(target, noisy, { count: 16, length: 16_000, concurrency: 4 })],
    ['validation threads: 12 × 17 KB at once', async () => ({ ...(await admittedPatternChecks(target, noisy, { count: 12, length: 17_000, concurrency: 12 })), quiet: [await quietThreadCheck(target, quiet)] })],
    ['event streams: 256 of one user', () => streamFlood(target, noisy, 256)],
    ['log-in: 36 wrong passwords from 3 sources', async () => passwordGuesses(target, quiet, 3, 12)],
    ['webhook deliveries: a 14 s receiver behind 40 endpoints', () => slowReceiver(target, noisy, quiet, version)],
  ];
  const rows = [];
  for (const [row, make] of attacks) {
    const attack = await make();
    const requests = [...quietSide, ...attack.quiet];
    const idle = await probeWhile(requests, sleep(IDLE_MS), IDLE_MS);
    let outcome: unknown;
    const during = await probeWhile(
      requests,
      attack.run().then((result) => (outcome = result)),
      2_000,
    ).finally(() => attack.close());
    const [before, under] = [figures(idle), figures(during)];
    const result = { row, idle: before, attack: under, p99Ratio: Math.round((under.p99Ms / Math.max(1, before.p99Ms)) * 100) / 100, outcome: Array.isArray(outcome) ? countOf(outcome) : outcome };
    console.log(`bench:isolation ${target.name} | ${row}: idle p50 ${before.p50Ms} / p99 ${before.p99Ms} ms, attack p50 ${under.p50Ms} / p99 ${under.p99Ms} ms (×${result.p99Ratio}), ${under.refused} refused`);
    rows.push(result);
  }
  return rows;
}

/** How many of each status an attack's requests got. */
function countOf(statuses: unknown[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[String(status)] = (counts[String(status)] ?? 0) + 1;
  return counts;
}

async function main() {
  const started = new Date();
  const starts: Array<() => Promise<Target>> = [() => devTarget({ DIDYMA_TRUST_PROXY: '1' })];
  if (process.env.TEST_DATABASE_URL && process.env.TEST_AMQP_URL) starts.push(() => separateTarget({ DIDYMA_TRUST_PROXY: '1' }));
  const targets = [];
  for (const start of starts) {
    const target = await start();
    try {
      targets.push({ target: target.name, rows: await rowsOn(target) });
    } finally {
      await target.close();
    }
  }
  await closeSharedDatabase();
  const file = path.resolve('bench/results', `isolation-${started.toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z')}.json`);
  const report = { date: started.toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg() }, settings: { idleMs: IDLE_MS }, targets };
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`bench:isolation written to ${path.relative(process.cwd(), file)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
