// What checking an invocation body against its model's schema costs the
// event loop that answers requests: inline, as before the validation pool,
// and through the pool. Small bodies decide whether a second, inline path for
// them would pay; a large one shows what the pool is for. Run in turns,
// round after round; the figures are the main thread's busy time per check
// (event-loop utilisation: the pool's threads are not in it) and the wall
// time per check, one at a time and 32 at once. Nothing here is a test: no
// figure fails a build.
//
//   npx tsx bench/validation.ts
//
// Environment: BENCH_ROUNDS (7), BENCH_CHECKS (2000 per round and body).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { checkBody, newValidators, type BodyCheck } from '../features/invocations/body-check.js';
import { ValidationPool } from '../features/invocations/validation-pool.js';
import { COSTLY_PER_BYTE, COSTLY_PER_ITEM, numbersBody } from '../test/support/hostile-schemas.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);
const CHECKS = Number(process.env.BENCH_CHECKS || 2000);

const IRIS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'],
  properties: Object.fromEntries(['sepal_length', 'sepal_width', 'petal_length', 'petal_width'].map((name) => [name, { type: 'number', minimum: 0 }])),
};
const IRIS = JSON.stringify({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 });
const rows = (n: number) => JSON.stringify(Array.from({ length: n }, () => JSON.parse(IRIS) as unknown));

interface Body {
  name: string;
  check: BodyCheck;
  checks: number;
}

const input = (key: string, schema: object, body: string): BodyCheck => ({ key, schema, schemaField: 'input_schema.schema', root: 'request.body', body, withFiles: false });

const BODIES: Body[] = [
  { name: 'iris, 1 row (103 B)', check: input('iris', IRIS_SCHEMA, IRIS), checks: CHECKS },
  { name: 'iris, 10 rows (1 KB)', check: input('iris-rows', { type: 'array', items: IRIS_SCHEMA }, rows(10)), checks: CHECKS },
  { name: 'iris, 100 rows (10 KB)', check: input('iris-rows', { type: 'array', items: IRIS_SCHEMA }, rows(100)), checks: CHECKS },
  { name: 'pattern schema, a string (98 B)', check: input('patterns', COSTLY_PER_BYTE, JSON.stringify('abc'.repeat(32))), checks: 20 },
  { name: 'costly schema, 200,000 numbers (400 KB)', check: input('costly', COSTLY_PER_ITEM, numbersBody(200_000)), checks: 2 },
];

type Mode = 'inline' | 'pool';
interface Sample {
  body: string;
  mode: Mode;
  concurrency: number;
  round: number;
  mainThreadUsPerCheck: number;
  wallUsPerCheck: number;
}

// The bench's in-place checks, compiled once as a pool's would be.
const inlineValidators = newValidators();

async function measure(pool: ValidationPool, body: Body, mode: Mode, concurrency: number): Promise<Omit<Sample, 'body' | 'mode' | 'concurrency' | 'round'>> {
  const once = mode === 'inline' ? async () => void checkBody(body.check, inlineValidators) : async () => void (await pool.check(1, body.check));
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  let left = body.checks;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await once();
    }),
  );
  const wall = performance.now() - started;
  const busy = performance.eventLoopUtilization(elu);
  return { mainThreadUsPerCheck: (busy.active * 1000) / body.checks, wallUsPerCheck: (wall * 1000) / body.checks };
}

async function main() {
  const startedAt = new Date();
  const pool = new ValidationPool({ threads: 2, timeoutMs: 60_000, maxWaitingPerWorkspace: 1000 });
  const samples: Sample[] = [];
  // Warm up: threads started, schemas compiled everywhere, code optimised.
  for (const body of BODIES) for (const mode of ['inline', 'pool'] as const) await measure(pool, { ...body, checks: Math.min(body.checks, 200) }, mode, 2);
  for (let round = 0; round < ROUNDS; round++) {
    for (const body of BODIES) {
      for (const concurrency of body.checks > 20 ? [1, 32] : [1]) {
        const order: Mode[] = round % 2 ? ['pool', 'inline'] : ['inline', 'pool'];
        for (const mode of order) samples.push({ body: body.name, mode, concurrency, round, ...(await measure(pool, body, mode, concurrency)) });
      }
    }
  }
  await pool.close();
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
  };
  const summary = BODIES.flatMap((body) =>
    [1, 32].flatMap((concurrency) => {
      const of = (mode: Mode) => samples.filter((s) => s.body === body.name && s.mode === mode && s.concurrency === concurrency);
      if (!of('inline').length) return [];
      return [
        {
          body: body.name,
          concurrency,
          inlineMainThreadUs: median(of('inline').map((s) => s.mainThreadUsPerCheck)),
          poolMainThreadUs: median(of('pool').map((s) => s.mainThreadUsPerCheck)),
          inlineWallUs: median(of('inline').map((s) => s.wallUsPerCheck)),
          poolWallUs: median(of('pool').map((s) => s.wallUsPerCheck)),
        },
      ];
    }),
  );
  console.table(summary);
  const file = path.join('bench', 'results', `validation-${startedAt.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}.json`);
  fs.writeFileSync(file, JSON.stringify({ started: startedAt.toISOString(), node: process.version, cpus: os.cpus().length, loadavg: os.loadavg(), rounds: ROUNDS, checks: CHECKS, summary, samples }, null, 2) + '\n');
  console.log(`written to ${file}`);
}

await main();
