// `make test`'s run of every test, in two lanes side by side. Much of a full
// run waits on other processes (pods starting and stopping, services
// restarting, servers draining), so each lane keeps one of the two cores busy
// while the other waits. The suites that stop or restart a shared service go
// first, while nothing else uses the services, beside the fast pass on PGlite,
// which uses none (the tests beside the code that use no service run there
// only). Then the cluster suite, and the other runs on the services, which
// each lane takes in turn as it comes free, so that neither waits idle at the
// end. A third lane measured no faster and made tests miss their waits.
// `npm run test:all` still runs everything in one process, one file after the
// other.
// usage: tsx scripts/test-lanes.ts SERVICE...   (the services whose variables the tests need)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface Groups {
  /** The chart's pods on the single-node cluster. */
  cluster: string[];
  /** The other suites of test/integration that leave the shared services running. */
  integration: string[];
  /** The tests beside the code that use a test service, directly or through what they import. */
  units: string[];
  /** The tests beside the code that use none: the fast pass runs them, and a second run would check nothing new. */
  serviceFree: string[];
  /** Integration suites that stop or restart a shared service (PostgreSQL, RabbitMQ, Prometheus). */
  alone: string[];
}

const INTEGRATION = /^test\/integration\//;
const CLUSTER_SUITE = /^test\/integration\/cluster-[^/]+\.test\.ts$/;

/** Whether a suite's source stops or restarts one of the services every suite shares, through their scripts. */
export function stopsSharedService(source: string): boolean {
  return /serviceScript|scripts\/services/.test(source) && /'(stop|restart)'/.test(source);
}

/** The files a source imports by a relative specifier, as paths from the repository's root (`./x.js` is `x.ts`). */
export function relativeImports(file: string, source: string): string[] {
  const specifiers = [...source.matchAll(/(?:\bfrom|\bimport\s*\(?)\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => path.posix.join(path.posix.dirname(file), specifier).replace(/\.js$/, '.ts'));
}

/**
 * Whether a file or anything it imports, however deep, names a test
 * service's variable (TEST_DATABASE_URL, TEST_AMQP_URL …): without them,
 * the file runs the same with or without the services.
 */
export function usesServices(file: string, sourceOf: (file: string) => string | undefined): boolean {
  const seen = new Set<string>();
  const visit = (at: string): boolean => {
    if (seen.has(at)) return false;
    seen.add(at);
    const source = sourceOf(at);
    if (source === undefined) return false;
    return /\bTEST_[A-Z]/.test(source) || relativeImports(at, source).some(visit);
  };
  return visit(file);
}

/** The test files, each in one group. `sourceOf` is undefined for a file that is not there (an import of a package's file, say). */
export function groupsOf(files: string[], sourceOf: (file: string) => string | undefined): Groups {
  const integration = files.filter((file) => INTEGRATION.test(file));
  const alone = integration.filter((file) => stopsSharedService(sourceOf(file) ?? ''));
  const cluster = integration.filter((file) => CLUSTER_SUITE.test(file) && !alone.includes(file));
  const beside = files.filter((file) => !INTEGRATION.test(file));
  const units = beside.filter((file) => usesServices(file, sourceOf));
  return {
    cluster,
    integration: integration.filter((file) => !alone.includes(file) && !cluster.includes(file)),
    units,
    serviceFree: beside.filter((file) => !units.includes(file)),
    alone,
  };
}

/** The files the spec globs of a mocha config name, each once, in name order. */
export function specFiles(specs: string[]): string[] {
  return [...new Set(specs.flatMap((spec) => fs.globSync(spec)))].sort();
}

/** One mocha process. */
interface Run {
  label: string;
  config: string;
  /** With the test services' variables (TEST_DATABASE_URL …), or without any, as the fast pass runs. */
  services: boolean;
}

/** A config file for some of the files: the whole run's options, with only those files. */
function configFor(base: Record<string, unknown>, files: string[], label: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-lane-')), `${label}.json`);
  fs.writeFileSync(file, JSON.stringify({ ...base, spec: files }));
  return file;
}

/** Runs mocha, its output into `output`. Resolves with its exit code. */
function mocha(run: Run, services: string[], output: NodeJS.WritableStream): Promise<number> {
  const command = `${run.services ? `eval "$(bash scripts/services/all.sh env ${services.join(' ')})" && ` : ''}exec npx mocha --config ${run.config}`;
  const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(output, { end: false });
  child.stderr.pipe(output, { end: false });
  return new Promise((resolve) => child.once('close', (code) => resolve(code ?? 1)));
}

/**
 * The runs one after the other, into `output`, then the runs of `shared`
 * that no other lane has taken yet, one at a time.
 */
async function lane(runs: Run[], services: string[], output: NodeJS.WritableStream, shared: Run[] = []): Promise<number[]> {
  const codes: number[] = [];
  for (let run = runs.shift() ?? shared.shift(); run; run = runs.shift() ?? shared.shift()) {
    output.write(`\n# ${run.label}\n`);
    codes.push(await mocha(run, services, output));
  }
  return codes;
}

/** `files` in `count` runs of consecutive files, as even in number as they go. */
export function chunks(files: string[], count: number): string[][] {
  const size = Math.ceil(files.length / count);
  return Array.from({ length: Math.ceil(files.length / size) }, (_, index) => files.slice(index * size, (index + 1) * size));
}

/** A lane whose output waits in a file, to be printed once every run is done. */
function buffered(name: string): { output: fs.WriteStream; file: string; print(): Promise<void> } {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-lane-')), `${name}.log`);
  const output = fs.createWriteStream(file);
  const print = async () => {
    await new Promise<void>((done) => output.end(done));
    process.stdout.write(fs.readFileSync(file, 'utf8'));
  };
  return { output, file, print };
}

/** Each file read once: the import walks of the test files meet the same support and source files over and over. */
function sourcesOnce(): (file: string) => string | undefined {
  const sources = new Map<string, string | undefined>();
  return (file) => {
    if (!sources.has(file)) sources.set(file, fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined);
    return sources.get(file);
  };
}

/** Runs of the integration suites: enough that the lane free first takes the next, few enough that starting mocha costs little. */
const INTEGRATION_RUNS = 3;

async function main(services: string[]): Promise<number> {
  const base = JSON.parse(fs.readFileSync('.mocharc.all.json', 'utf8')) as Record<string, unknown> & { spec: string[] };
  const groups = groupsOf(specFiles(base.spec), sourcesOnce());
  // Mocha refuses a run without files: an empty group is no run. The service-free tests run in the fast pass only.
  const run = (name: string, files: string[]): Run[] =>
    files.length ? [{ label: `${name}: ${files.length} files on the services`, config: configFor(base, files, name.replace(/\W+/g, '-')), services: true }] : [];
  const fastPass: Run = { label: 'fast pass: the tests beside the code on PGlite, no services', config: '.mocharc.fast.json', services: false };
  // The suites that stop services run while no other suite uses them, beside the fast pass, which uses none.
  const first = buffered('stopping-then-cluster');
  console.log(`# two lanes side by side; the first lane's output follows the second's (meanwhile in ${first.file})`);
  const alone = lane(run('alone', groups.alone), services, first.output);
  const fast = lane([fastPass], services, process.stdout);
  const shared = [
    ...run('units', groups.units),
    ...chunks(groups.integration, INTEGRATION_RUNS).flatMap((files, index) => run(`integration ${index + 1}`, files)),
  ];
  const lanes = await Promise.all([
    alone.then(async (stoppingCodes) => [...stoppingCodes, ...(await lane(run('cluster', groups.cluster), services, first.output, shared))]),
    Promise.all([alone, fast]).then(async ([, fastCodes]) => [...fastCodes, ...(await lane([], services, process.stdout, shared))]),
  ]);
  await first.print();
  return lanes.flat().some((code) => code !== 0) ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
