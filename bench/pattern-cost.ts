// What a tenant's `pattern` costs RE2 (re2js, the engine ajv runs patterns
// on): compiling it, per instruction counted from its text
// (features/models/pattern-cost.ts), and matching it, per instruction of its
// program and per character of the string, for shapes and texts that keep
// the engine at its worst (its time is linear in program size × text
// length). The figures give the constants of
// features/invocations/validation-pool.ts and the limits of docs/decisions.md.
// Nothing here is a test: no figure fails a build.
//
//   npx tsx bench/pattern-cost.ts
//
// Environment: BENCH_ROUNDS (5).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { RE2JS } from 're2js';
import { compileSchema, SCHEMA_LIMITS } from '../features/models/json-schema.js';
import { patternInstructions } from '../features/models/pattern-cost.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);

const alternatives = (n: number, width: number) => Array.from({ length: n }, (_, i) => `.{${width - i}}`).join('|');

// Each shape ends in a character the text holds only at its end, so that no
// match ends the search early (nor does RE2's check for a required literal
// skip it). The text is random x and y: re2js caches the states of a lazy
// DFA, and a text that keeps reaching new states costs each character a walk
// over every live instruction, the engine's worst case.
const NEVER = '!';
let seed = 1;
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const text = (c: number) => Array.from({ length: c - 1 }, () => (random() < 0.5 ? 'x' : 'y')).join('') + NEVER;
const counted = (n: number, what: string) => `${what}{1000}`.repeat(Math.max(1, Math.round(n / 1000))).replace(`${what}{1000}`, `${what}{${Math.min(1000, n)}}`);

/** Shapes of about `size` instructions each (at most 1000 repeated per counted repetition, RE2's maximum). */
const SHAPES: Array<{ name: string; pattern: (size: number) => string }> = [
  { name: 'counted any, .{n}', pattern: (n) => `(?:${counted(n, '.')})${NEVER}` },
  { name: 'x then a counted class, x[xy]{n}', pattern: (n) => `x${counted(n, '[xy]')}${NEVER}` },
  { name: 'alternatives of counted any (the issue)', pattern: (n) => `(?:${alternatives(Math.max(1, Math.round(n / Math.min(1000, n))), Math.min(1000, n))})${NEVER}` },
  { name: 'alternatives of literals', pattern: (n) => `(?:${Array.from({ length: Math.round(n / 6) }, (_, i) => `x${i.toString(36).padStart(4, 'y')}`).join('|')})${NEVER}` },
  { name: 'nested stars', pattern: (n) => `(?:${'(?:x|y)*'.repeat(Math.round(n / 4))})${NEVER}` },
  { name: 'classes counted', pattern: (n) => `(?:[a-z0-9]{1,${Math.min(1000, Math.round(n / 2))}})+${NEVER}` },
];

interface Sample {
  shape: string;
  instructions: number;
  estimate: number;
  chars: number;
  compileMs: number;
  matchMs: number;
  compileNsPerEstimatedInstruction: number;
  matchNsPerInstructionChar: number;
}

function measure(shape: (typeof SHAPES)[number], size: number, chars: number): Sample {
  const pattern = shape.pattern(size);
  let started = performance.now();
  const re = RE2JS.compile(pattern);
  const compileMs = performance.now() - started;
  const subject = text(chars);
  started = performance.now();
  re.test(subject);
  const matchMs = performance.now() - started;
  const instructions = re.programSize();
  return {
    shape: shape.name,
    instructions,
    estimate: patternInstructions(pattern),
    chars,
    compileMs,
    matchMs,
    compileNsPerEstimatedInstruction: (compileMs * 1e6) / patternInstructions(pattern),
    matchNsPerInstructionChar: (matchMs * 1e6) / (instructions * chars),
  };
}

/** Compiling, as registration does, a schema of two patterns that together reach the schema's pattern limit: median and slowest of the rounds. */
function schemasAtTheLimits() {
  const half = SCHEMA_LIMITS.schemaPatternInstructions / 2;
  const largest = (shape: (n: number) => string, suffix: string) => {
    let n = 1;
    while (patternInstructions(shape(n + 1) + suffix) <= Math.min(half, SCHEMA_LIMITS.patternInstructions)) n += 1;
    return shape(n) + suffix;
  };
  const shapes: Record<string, (suffix: string) => string> = {
    'nested stars': (suffix) => largest((n) => `(?:${'(?:x|y)*'.repeat(n)})`, suffix),
    'alternatives of counted any': (suffix) => largest((n) => alternatives(n, 1000), suffix),
    'alternatives of literals': (suffix) => largest((n) => Array.from({ length: n }, (_, i) => `x${i.toString(36).padStart(4, 'y')}`).join('|'), suffix),
  };
  return Object.entries(shapes).map(([name, shape]) => {
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const schema = { anyOf: ['a', 'b'].map((suffix) => ({ type: 'string', pattern: shape(`${suffix}${round}`) })) };
      const started = performance.now();
      compileSchema(schema, 'schema');
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return { schema: `two patterns of ${name}`, instructions: patternInstructions(shape('a0')) * 2, medianMs: Math.round(times[times.length >> 1]! * 10) / 10, slowestMs: Math.round(times.at(-1)! * 10) / 10 };
  });
}

function main() {
  const startedAt = new Date();
  const samples: Sample[] = [];
  for (const shape of SHAPES) measure(shape, 2000, 200); // warm up
  for (let round = 0; round < ROUNDS; round++) {
    for (const shape of SHAPES) for (const size of [1000, 2000, 4000]) samples.push(measure(shape, size, 2 * size + 2000));
  }
  const max = (values: number[]) => Math.round(Math.max(...values) * 100) / 100;
  const median = (values: number[]) => Math.round([...values].sort((a, b) => a - b)[values.length >> 1]! * 100) / 100;
  const summary = SHAPES.map((shape) => {
    const of = samples.filter((s) => s.shape === shape.name);
    return {
      shape: shape.name,
      compileNsPerEstimatedInstructionMedian: median(of.map((s) => s.compileNsPerEstimatedInstruction)),
      compileNsPerEstimatedInstructionMax: max(of.map((s) => s.compileNsPerEstimatedInstruction)),
      matchNsPerInstructionCharMedian: median(of.map((s) => s.matchNsPerInstructionChar)),
      matchNsPerInstructionCharMax: max(of.map((s) => s.matchNsPerInstructionChar)),
      estimateOverInstructionsMin: max(of.map((s) => -s.estimate / s.instructions)) * -1,
    };
  });
  // The attack: 300 alternatives .{1000}|…|.{701} against 1,000 characters.
  const attack = alternatives(300, 1000);
  const attackRe = RE2JS.compile(attack);
  const started = performance.now();
  attackRe.test(text(1000));
  const attackSample = { patternBytes: attack.length, estimate: patternInstructions(attack), instructions: attackRe.programSize(), matchMs: performance.now() - started };
  const compiles = schemasAtTheLimits();
  console.table(summary);
  console.log(attackSample);
  console.table(compiles);
  const file = path.join('bench', 'results', `pattern-cost-${startedAt.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}.json`);
  fs.writeFileSync(file, JSON.stringify({ started: startedAt.toISOString(), node: process.version, cpus: os.cpus().length, loadavg: os.loadavg(), rounds: ROUNDS, summary, attack: attackSample, compiles, samples }, null, 2) + '\n');
  console.log(`written to ${file}`);
}

main();
