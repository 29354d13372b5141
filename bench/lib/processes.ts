import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import YAML from 'yaml';
import net from 'node:net';
import path from 'node:path';

// Child processes of a benchmark run: started from the TypeScript sources
// (`node --import tsx …`), logs to a file, and their peak RSS read from the
// kernel (VmHWM) before they stop.

export interface Child {
  name: string;
  process: ChildProcess;
  /** Highest VmHWM seen (bytes), kept across restarts of the same name. */
  peakRss(): number;
  stop(): Promise<void>;
}

const ROOT = path.resolve(new URL('../..', import.meta.url).pathname);
const peaks = new Map<string, number>();

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Peak resident set size of a live process, in bytes (0 once it is gone). */
export function vmHwm(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function sample(name: string, pid: number | undefined): number {
  const peak = Math.max(peaks.get(name) ?? 0, vmHwm(pid));
  peaks.set(name, peak);
  return peak;
}

/**
 * The node arguments of a `didyma` command: the compiled CLI (bin/didyma.js,
 * what production runs; `make bench` builds it first) or, with BENCH_RUNTIME=tsx,
 * the sources. tsx roughly doubles a process's RSS, so memory figures need the build.
 */
export function cli(args: string[]): string[] {
  return process.env.BENCH_RUNTIME === 'tsx' ? ['--import', 'tsx', 'cli/entry.ts', ...args] : ['bin/didyma.js', ...args];
}

/** A TypeScript helper of the benchmark itself (bench/*.ts), run under tsx. */
export function script(file: string, args: string[]): string[] {
  return ['--import', 'tsx', file, ...args];
}

const platformProcess = (nodeArgs: string[]) => nodeArgs[0] === 'bin/didyma.js' || nodeArgs.includes('cli/entry.ts');

/**
 * Node options of a platform process: the API servers and the executor run
 * as the Helm chart runs them (its `serverNodeOptions` and
 * `executor.nodeOptions`, heap caps); BENCH_NODE_OPTIONS, when set, replaces
 * them for every platform process (e.g. to compare heap limits).
 */
export function nodeOptionsOf(nodeArgs: string[]): string[] {
  const override = process.env.BENCH_NODE_OPTIONS;
  if (override !== undefined) return override.split(' ').filter(Boolean);
  const values = YAML.parse(fs.readFileSync(path.join(ROOT, 'charts/didyma/values.yaml'), 'utf8')) as { serverNodeOptions?: string; executor?: { nodeOptions?: string } };
  const options = nodeArgs.includes('serve') ? values.serverNodeOptions : nodeArgs.includes('executor') ? values.executor?.nodeOptions : undefined;
  return (options ?? '').split(/\s+/).filter(Boolean);
}

/** Runs node with `nodeArgs` from the repository root; stdout and stderr go to `logFile`. */
export function startNode(name: string, nodeArgs: string[], env: Record<string, string>, logFile: string): Child {
  const log = fs.openSync(logFile, 'a');
  // BENCH_PROFILE=public,executor…: a V8 CPU profile of those processes, written to BENCH_PROFILE_DIR when they stop.
  const profile = (process.env.BENCH_PROFILE ?? '').split(',').includes(name) ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR ?? path.dirname(logFile)}`] : [];
  const extra = platformProcess(nodeArgs) ? nodeOptionsOf(nodeArgs) : [];
  const child = spawn(process.execPath, [...profile, ...extra, ...nodeArgs], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  return {
    name,
    process: child,
    peakRss: () => (exited ? (peaks.get(name) ?? 0) : sample(name, child.pid)),
    async stop() {
      if (exited) return;
      sample(name, child.pid);
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** Polls `url` until it answers 200 (or the child exits, or `timeoutMs` passes). */
export async function waitReady(child: Child, url: string, timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) throw new Error(`${child.name} exited with code ${child.process.exitCode} before it was ready (see its log)`);
    try {
      const reply = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (reply.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${child.name} was not ready at ${url} within ${timeoutMs} ms`);
}

/** Runs the CLI once to completion (migrate, admin bootstrap, …). */
export function runCli(args: string[], env: Record<string, string>, logFile: string): Promise<void> {
  const child = startNode(`cli ${args.join(' ')}`, cli(args), env, logFile);
  return new Promise((resolve, reject) => {
    child.process.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`didyma ${args.join(' ')} exited with ${code} (log: ${logFile})`))));
  });
}
