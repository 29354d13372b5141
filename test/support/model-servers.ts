import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDemoModelServer } from '../../demo/model-server/server.js';
import type { Client, Reply } from './http.js';
import { startTestPlatform, type TestPlatform } from './platform.js';

/**
 * Real model servers for the integration tests (MLServer, the MLflow tracking
 * server, MLflow's scoring server), run from the Python virtualenv that
 * scripts/services/python.sh sets up. Each runs as a child process in its own
 * process group on free loopback ports, so that stopping it also stops the
 * workers it forks; a test creates one `ModelServers` in `before` and calls
 * `close()` in `after`. Set TEST_MODEL_SERVERS_VERBOSE=1 to see start-up times
 * and the servers' output on stderr.
 */

const SCRIPTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python');
const VERBOSE = Boolean(process.env.TEST_MODEL_SERVERS_VERBOSE);
/** How much of a process's output is kept for error messages. */
const OUTPUT_LIMIT = 64 * 1024;
const PORT_TAKEN = /address already in use|Errno 98|EADDRINUSE/i;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Process groups still running and work directories still there: cleaned up if the test process exits without `close()`. */
const liveGroups = new Set<number>();
const workDirs = new Set<string>();
process.once('exit', () => {
  for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  for (const dir of workDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `count` distinct free loopback ports (all held open while picking, so none repeats). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** One child process in its own process group, its output kept for error messages. */
export class ManagedProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  private output = '';
  private stdout = '';

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    options: SpawnOptions,
  ) {
    // detached: a new process group, so that stop() reaches the workers it forks.
    this.child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    if (this.child.pid !== undefined) liveGroups.add(this.child.pid);
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString('utf8');
      this.record(chunk);
    });
    this.child.stderr!.on('data', (chunk: Buffer) => this.record(chunk));
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => {
        this.output += `\n[${name}] ${error.message}\n`;
        resolve();
      });
      this.child.once('exit', () => resolve());
    });
  }

  get running(): boolean {
    return this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How the process ended, for messages. */
  get ending(): string {
    if (this.child.signalCode) return `killed by ${this.child.signalCode}`;
    if (this.child.exitCode !== null) return `exit code ${this.child.exitCode}`;
    return 'failed to start';
  }

  /** Everything the process wrote on stdout (bounded only by the process). */
  get standardOutput(): string {
    return this.stdout;
  }

  /** The last lines of stdout and stderr together. */
  tail(lines = 40): string {
    return this.output.trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Polls `url` until it answers 2xx; fails with the output's tail when the process exits or time runs out. */
  async waitReady(url: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`${this.name} ended (${this.ending}) before ${url} answered. Its output:\n${this.tail()}`);
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
        await response.arrayBuffer();
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await sleep(500);
    }
    throw new Error(`${this.name} did not answer ${url} within ${Math.round(timeoutMs / 1000)} s. Its output:\n${this.tail()}`);
  }

  /** Waits for the process to end by itself; kills it when it takes longer than `timeoutMs`. */
  async finish(timeoutMs: number): Promise<void> {
    const done = await Promise.race([this.exited.then(() => true), sleep(timeoutMs).then(() => false)]);
    if (!done) {
      await this.stop();
      throw new Error(`${this.name} did not finish within ${Math.round(timeoutMs / 1000)} s. Its output:\n${this.tail()}`);
    }
    await this.reapGroup(2_000);
  }

  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves when the group is gone. */
  async stop(graceMs = 10_000): Promise<void> {
    const pgid = this.child.pid;
    if (pgid === undefined) return;
    if (liveGroups.has(pgid)) signalGroup(pgid, 'SIGTERM');
    await Promise.race([this.exited, sleep(graceMs)]);
    // Workers forked by the leader (uvicorn, the scoring server) may outlive it.
    await this.reapGroup(this.running ? 0 : 2_000);
  }

  /** Waits up to `graceMs` for the process group to empty, then kills what is left. */
  private async reapGroup(graceMs: number): Promise<void> {
    const pgid = this.child.pid;
    if (pgid === undefined || !liveGroups.has(pgid)) return;
    const deadline = Date.now() + graceMs;
    while (signalGroup(pgid, 0) && Date.now() < deadline) await sleep(100);
    if (signalGroup(pgid, 0)) signalGroup(pgid, 'SIGKILL');
    await Promise.race([this.exited, sleep(5_000)]);
    liveGroups.delete(pgid);
  }

  private record(chunk: Buffer): void {
    const text = chunk.toString('utf8');
    if (VERBOSE) process.stderr.write(text.replace(/^(?=.)/gm, `[${this.name}] `));
    this.output += text;
    if (this.output.length > OUTPUT_LIMIT) this.output = this.output.slice(-OUTPUT_LIMIT);
  }
}

export interface StartedServer {
  url: string;
  process: ManagedProcess;
}

/**
 * The model servers and Python scripts of one test file, under one temporary
 * work directory: `close()` stops every process they started and removes the
 * directory; nothing starts after it (a start still under way when a hook
 * times out fails instead of leaving a server behind).
 */
export class ModelServers {
  readonly workDir: string;
  private readonly processes = new Set<ManagedProcess>();
  private closed = false;

  /** `bin`: the virtualenv's bin directory (TEST_PYTHON_VENV or TEST_MLFLOW_VENV). */
  constructor(readonly bin: string) {
    this.tool('python');
    this.workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-model-servers-'));
    workDirs.add(this.workDir);
  }

  /** The path of a program of the virtualenv, or a failure saying how to install it. */
  tool(name: string): string {
    const file = path.join(this.bin, name);
    if (!fs.existsSync(file)) throw new Error(`${file} does not exist: set up the Python tools with \`bash scripts/services/python.sh setup\` and export \`bash scripts/services/python.sh env\` (make test does both).`);
    return file;
  }

  /**
   * A small environment of the virtualenv's tools: nothing from the test's own
   * environment can point MLServer or MLflow elsewhere, and no telemetry leaves
   * the machine.
   */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: `${this.bin}${path.delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: process.env.HOME ?? this.workDir,
      LANG: 'C.UTF-8',
      TMPDIR: os.tmpdir(),
      VIRTUAL_ENV: path.dirname(this.bin),
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      MLFLOW_DISABLE_TELEMETRY: 'true',
      DO_NOT_TRACK: 'true',
      ...extra,
    };
  }

  /** A fresh directory under the work directory. */
  dir(name: string): string {
    return fs.mkdtempSync(path.join(this.workDir, `${name}-`));
  }

  spawn(name: string, tool: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): ManagedProcess {
    if (this.closed) throw new Error(`not starting ${name}: the model servers of this test were closed (a hook timed out?)`);
    const child = new ManagedProcess(name, this.tool(tool), args, { cwd: options.cwd ?? this.workDir, env: this.env(options.env) });
    this.processes.add(child);
    return child;
  }

  /** Runs a script of test/support/python and returns the JSON object it prints last on stdout. */
  async python<T = Record<string, unknown>>(script: string, args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<T> {
    const started = Date.now();
    const child = this.spawn(script, 'python', [path.join(SCRIPTS, script), ...args], { env: options.env });
    try {
      await child.finish(options.timeoutMs ?? 120_000);
    } finally {
      this.processes.delete(child);
    }
    if (child.child.exitCode !== 0) throw new Error(`${script} failed (${child.ending}). Its output:\n${child.tail()}`);
    const last = child.standardOutput.trim().split('\n').filter((line) => line.startsWith('{')).at(-1);
    if (!last) throw new Error(`${script} printed no JSON summary. Its output:\n${child.tail()}`);
    timing(`${script} ran`, started);
    return JSON.parse(last) as T;
  }

  /**
   * Starts a server on `portCount` fresh free ports and waits until `readyPath`
   * answers. `prepare` gets the ports and returns the arguments; a port taken
   * in the meantime by another process means a retry on new ports.
   */
  async start(name: string, tool: string, options: { portCount: number; readyPath: string; timeoutMs: number; cwd?: string; env?: Record<string, string>; prepare: (ports: number[]) => string[] }): Promise<StartedServer> {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const ports = await freePorts(options.portCount);
      const url = `http://127.0.0.1:${ports[0]}`;
      const child = this.spawn(name, tool, options.prepare(ports), { cwd: options.cwd, env: options.env });
      try {
        await child.waitReady(`${url}${options.readyPath}`, options.timeoutMs);
        timing(`${name} answered on ${url}`, started);
        return { url, process: child };
      } catch (error) {
        await child.stop();
        this.processes.delete(child);
        if (attempt < 3 && PORT_TAKEN.test(child.tail())) continue;
        throw error;
      }
    }
  }

  /** Stops every process (in parallel) and removes the work directory. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.processes].map((child) => child.stop()));
    this.processes.clear();
    fs.rmSync(this.workDir, { recursive: true, force: true });
    workDirs.delete(this.workDir);
  }
}

/**
 * A model server (slow to start) and the test platform, started side by side.
 * Should either fail, the other is stopped before the error is thrown.
 */
export async function startWithPlatform<S>(starting: Promise<S>): Promise<{ server: S; t: TestPlatform }> {
  const [server, platform] = await Promise.allSettled([starting, startTestPlatform()]);
  if (server.status === 'fulfilled' && platform.status === 'fulfilled') return { server: server.value, t: platform.value };
  if (platform.status === 'fulfilled') await platform.value.close();
  throw server.status === 'rejected' ? server.reason : (platform as PromiseRejectedResult).reason;
}

function timing(what: string, started: number): void {
  if (VERBOSE) process.stderr.write(`[model-servers] ${what} after ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

// ---------------------------------------------------------------------------
// MLServer

export interface IrisSummary {
  feature_names: string[];
  sample: number[];
  sample_prediction: string;
}

export interface MlserverModel extends StartedServer {
  name: string;
  version: string;
  summary: IrisSummary;
  /** The model's directory in the repository (model.joblib, model-settings.json). */
  modelDir: string;
}

/**
 * Trains the iris classifier into a fresh model repository (model-settings.json
 * with mlserver_sklearn.SKLearnModel, `name` and `version`), writes the
 * server's settings.json (loopback, free HTTP and gRPC ports, metrics off,
 * inference in the main process) and starts `mlserver start` on it.
 */
export async function startMlserver(servers: ModelServers, model: { name: string; version: string; signature?: boolean }, timeoutMs = 120_000): Promise<MlserverModel> {
  const repository = servers.dir('mlserver');
  const summary = await servers.python<IrisSummary>('mlserver_iris.py', [repository, '--name', model.name, '--version', model.version, ...(model.signature ? ['--signature'] : [])]);
  const started = await servers.start('mlserver', 'mlserver', {
    portCount: 2,
    readyPath: '/v2/health/ready',
    timeoutMs,
    cwd: repository,
    prepare: ([http, grpc]) => {
      const settings = {
        host: '127.0.0.1',
        http_port: http,
        // MLServer always starts its gRPC server: it gets a free loopback port too.
        grpc_port: grpc,
        metrics_endpoint: null,
        // One process: no inference pool to start on a busy machine.
        parallel_workers: 0,
        // Production-like error answers (no tracebacks).
        debug: false,
        load_models_at_startup: true,
      };
      fs.writeFileSync(path.join(repository, 'settings.json'), JSON.stringify(settings, null, 2));
      return ['start', repository];
    },
  });
  return { ...started, ...model, summary, modelDir: path.join(repository, model.name) };
}

/**
 * An explainer of an MLServer iris model as KServe's explainer components
 * answer (v1 `:explain`): test/support/python/iris_explainer.py, each
 * feature's contribution to the predicted class.
 */
export function startIrisExplainer(servers: ModelServers, model: MlserverModel, timeoutMs = 60_000): Promise<StartedServer> {
  return servers.start('iris-explainer', 'python', {
    portCount: 1,
    readyPath: `/v1/models/${model.name}`,
    timeoutMs,
    prepare: ([port]) => [path.join(SCRIPTS, 'iris_explainer.py'), model.modelDir, '--name', model.name, '--port', String(port)],
  });
}

// ---------------------------------------------------------------------------
// MLflow

/**
 * `mlflow server`: tracking and model registry, a SQLite backend store and
 * proxied artifacts in a local directory, one worker, background jobs off.
 */
export async function startMlflowTracking(servers: ModelServers, timeoutMs = 150_000): Promise<StartedServer> {
  const dir = servers.dir('mlflow-tracking');
  return servers.start('mlflow-server', 'mlflow', {
    portCount: 1,
    readyPath: '/health',
    timeoutMs,
    cwd: dir,
    // The job runner forks several consumers that the registry does not need.
    env: { MLFLOW_SERVER_ENABLE_JOB_EXECUTION: 'false' },
    prepare: ([port]) => [
      'server',
      '--backend-store-uri',
      `sqlite:///${path.join(dir, 'mlflow.db')}`,
      '--artifacts-destination',
      path.join(dir, 'artifacts'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--workers',
      '1',
    ],
  });
}

export interface RegisteredMlflowModel extends IrisSummary {
  name: string;
  version: string;
  run_id: string;
  /** The logged model the version was registered from (`models:/m-…`). */
  model_uri: string;
}

/** Trains the iris classifier, logs it to the tracking server and registers it as `name` (version 1). */
export function registerMlflowModel(servers: ModelServers, trackingUrl: string, name: string, timeoutMs = 150_000): Promise<RegisteredMlflowModel> {
  return servers.python<RegisteredMlflowModel>('mlflow_register_iris.py', ['--name', name], { env: { MLFLOW_TRACKING_URI: trackingUrl }, timeoutMs });
}

/** `mlflow models serve` of a registered model version, in the virtualenv itself (`--env-manager local`). */
export async function startMlflowScoring(servers: ModelServers, trackingUrl: string, modelUri: string, timeoutMs = 150_000): Promise<StartedServer> {
  return servers.start('mlflow-scoring', 'mlflow', {
    portCount: 1,
    readyPath: '/ping',
    timeoutMs,
    cwd: servers.dir('mlflow-scoring'),
    env: { MLFLOW_TRACKING_URI: trackingUrl },
    prepare: ([port]) => ['models', 'serve', '-m', modelUri, '--env-manager', 'local', '-h', '127.0.0.1', '-p', String(port), '-w', '1'],
  });
}

// ---------------------------------------------------------------------------
// Through the platform

/** Polls an invocation through the public API until it is COMPLETED or ERROR, and returns it. */
export async function finishedInvocation(client: Client, token: string, path: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: Reply | undefined;
  while (Date.now() < deadline) {
    last = await client.get(path, { token });
    if (last.status !== 200) throw new Error(`GET ${path}: ${last.status} ${last.text}`);
    if (last.body.status === 'COMPLETED' || last.body.status === 'ERROR') return last.body;
    await sleep(100);
  }
  throw new Error(`invocation ${path} did not finish within ${Math.round(timeoutMs / 1000)} s; last seen: ${last?.text}`);
}

/**
 * Opens a fresh session of the model at `modelPath`, queues one PREDICT with
 * `body` (as JSON text) and waits for it to finish. Returns the create reply,
 * the finished invocation and how many times the executor claimed it.
 */
export async function predictInNewSession(t: TestPlatform, token: string, modelPath: string, body: unknown) {
  const session = await t.public.post(`${modelPath}/session`, { token });
  if (session.status !== 201) throw new Error(`session: ${session.status} ${session.text}`);
  const path = `${modelPath}/session/${session.body.id}/invocation`;
  const created = await t.public.post(path, { token, json: { type: 'PREDICT', request: { type: 'FEATURES', body: JSON.stringify(body) } } });
  if (created.status !== 201) throw new Error(`invocation: ${created.status} ${created.text}`);
  const finished = await finishedInvocation(t.public, token, `${path}/${created.body.id}`);
  const row = await t.platform.db('invocations').where({ id: created.body.id }).first();
  return { created, finished, attempts: row.attempts as number };
}

// ---------------------------------------------------------------------------
// Counting model calls

/**
 * The key of one inference request: its tensors by name with their data, as
 * the Open Inference proxy sends a body of features (one tensor per feature).
 */
export function inferenceKey(features: Record<string, unknown>): string {
  return Object.keys(features)
    .sort()
    .map((name) => `${name}=${JSON.stringify([features[name]])}`)
    .join('&');
}

function keyOfRequest(text: string): string {
  try {
    const inputs = (JSON.parse(text) as { inputs?: Array<{ name: string; data: unknown[] }> }).inputs ?? [];
    return [...inputs]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((input) => `${input.name}=${JSON.stringify(input.data)}`)
      .join('&');
  } catch {
    return text;
  }
}

export interface CountingModelServer {
  url: string;
  /** Inference calls received for each request key (`inferenceKey` of the invocation's features). */
  calls(key: string): number;
  /** Inference calls received and not yet answered. */
  inProgress(): number;
  /** Inference calls received in all. */
  total(): number;
  close(): Promise<void>;
}

/**
 * The demo model server behind a front that counts every inference call it
 * receives, per request, and answers each after `delayMs`: a slow model, so
 * that executors hold work in flight, whose calls a test can count one by one.
 */
export async function countingModelServer(version: string, delayMs: number): Promise<CountingModelServer> {
  const demo = createDemoModelServer({ version });
  const { url: demoUrl } = await demo.listen(0, '127.0.0.1');
  const counts = new Map<string, number>();
  let inProgress = 0;
  let total = 0;
  const front = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const inference = req.method === 'POST' && /\/infer$/.test(req.url ?? '');
        if (inference) {
          const key = keyOfRequest(body.toString('utf8'));
          counts.set(key, (counts.get(key) ?? 0) + 1);
          total += 1;
          inProgress += 1;
          await sleep(delayMs);
        }
        try {
          const answer = await fetch(`${demoUrl}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'GET' ? undefined : body });
          const text = await answer.text();
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(text);
        } catch (error) {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: String(error) }));
        } finally {
          if (inference) inProgress -= 1;
        }
      })();
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    calls: (key) => counts.get(key) ?? 0,
    inProgress: () => inProgress,
    total: () => total,
    async close() {
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await demo.close();
    },
  };
}
