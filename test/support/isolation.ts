import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from './http.js';
import { freePorts, ManagedProcess } from './model-servers.js';
import { didymaProcess } from './didyma-process.js';
import { sharedDatabase, sharedDatabaseUrl } from './database.js';
import { requireEnv, deleteWorkQueue } from './services.js';
import { testKeys, testSecretKeyFile, unique } from './platform.js';
import { demoDeployment, filesystemStorage, modelPayload, startDemoModelServer, upload } from './fixtures.js';
import { addMember, createUser, createWorkspace } from '../../features/identity/admin.js';

// The isolation suites attack real `didyma` processes, as a tenant or an
// anonymous client would, and time a quiet workspace's requests from the
// test process meanwhile: a stalled event loop shows there as it would to
// any client, whatever the process does inside.

/** Bounds of the waits: generous, the machine may be slow and shared. */
const START_MS = 180_000;
const PASSWORD = 'Isolation-Pass-42';

/** didyma as a client sees it: its three servers, their health checks and a staff token. */
export interface Target {
  name: string;
  auth: Client;
  private: Client;
  public: Client;
  /** `/healthz` of every server. */
  healthz: string[];
  /** A staff user's token, bound to a workspace of its own. */
  staff: string;
  /** Closed with the target: the model servers its tests started. */
  owned: Array<{ close(): Promise<void> }>;
  /** Each process's last lines, for the message of a failed test. */
  tails(): string;
  close(): Promise<void>;
}

/** A workspace with a supervisor and a user, each logged in. */
export interface Workspace {
  id: number;
  name: string;
  supervisor: string;
  user: string;
  userEmail: string;
}

/**
 * `didyma dev`: every server, the executor and the demo model server in one
 * process on embedded PGlite, `env` over its defaults.
 */
export async function devTarget(env: Record<string, string> = {}): Promise<Target> {
  const ports = await freePorts(5);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-isolation-'));
  const [auth, priv, pub, demo, executor] = ports as [number, number, number, number, number];
  const child = new ManagedProcess('dev', process.execPath, ['--import', 'tsx', 'cli/entry.ts', 'dev'], {
    cwd: process.cwd(),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DIDYMA_DATA_DIR: dataDir,
      DIDYMA_AUTH_PORT: String(auth),
      DIDYMA_PRIVATE_PORT: String(priv),
      DIDYMA_PUBLIC_PORT: String(pub),
      DIDYMA_DEMO_MODEL_SERVER_PORT: String(demo),
      DIDYMA_EXECUTOR_PORT: String(executor),
      DIDYMA_ADMIN_PASSWORD: PASSWORD,
      DIDYMA_LOG_LEVEL: 'warn',
      ...env,
    },
  });
  const urls = [auth, priv, pub].map((port) => `http://127.0.0.1:${port}`);
  try {
    for (const url of urls) await child.waitReady(`${url}/readyz`, START_MS);
  } catch (error) {
    await child.stop(0);
    throw error;
  }
  const authClient = new Client(urls[0]!);
  const staff = await obtain(authClient, 'admin@didyma.local', PASSWORD, 'default');
  const owned: Target['owned'] = [];
  return {
    name: 'didyma dev',
    auth: authClient,
    private: new Client(urls[1]!),
    public: new Client(urls[2]!),
    healthz: urls.map((url) => `${url}/healthz`),
    staff,
    owned,
    tails: () => child.tail(),
    async close() {
      await Promise.all(owned.map((server) => server.close()));
      await child.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Each server and an executor in a process of its own, on the shared
 * PostgreSQL test database and RabbitMQ (a queue of its own), `env` over
 * their defaults.
 */
export async function separateTarget(env: Record<string, string> = {}): Promise<Target> {
  const amqpUrl = requireEnv('TEST_AMQP_URL', 'rabbitmq');
  const databaseUrl = await sharedDatabaseUrl();
  const queue = unique('dy-isolation');
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-isolation-keys-'));
  const signingKey = path.join(keyDir, 'jwt-private.pem');
  fs.writeFileSync(signingKey, testKeys.privateKey!.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const [auth, priv, pub, executorPort] = (await freePorts(4)) as [number, number, number, number];
  const common = { DATABASE_URL: databaseUrl, DIDYMA_AMQP_URL: amqpUrl, DIDYMA_QUEUE_NAME: queue, DIDYMA_SECRET_KEY_FILE: testSecretKeyFile, ...env };
  const children = [
    didymaProcess('auth', ['serve', 'auth'], { ...common, DIDYMA_AUTH_PORT: String(auth), DIDYMA_JWT_PRIVATE_KEY_FILE: signingKey, DIDYMA_JWT_PUBLIC_KEY_FILE: '' }),
    didymaProcess('private', ['serve', 'private'], { ...common, DIDYMA_PRIVATE_PORT: String(priv) }),
    didymaProcess('public', ['serve', 'public'], { ...common, DIDYMA_PUBLIC_PORT: String(pub) }),
    didymaProcess('executor', ['executor'], { ...common, DIDYMA_EXECUTOR_PORT: String(executorPort) }),
  ];
  const urls = [auth, priv, pub].map((port) => `http://127.0.0.1:${port}`);
  const owned: Target['owned'] = [];
  const close = async () => {
    await Promise.all(owned.map((server) => server.close()));
    await Promise.all(children.map((child) => child.stop()));
    await deleteWorkQueue(amqpUrl, queue);
    fs.rmSync(keyDir, { recursive: true, force: true });
  };
  try {
    for (const [index, url] of urls.entries()) await children[index]!.waitReady(`${url}/readyz`, START_MS);
    await children[3]!.waitReady(`http://127.0.0.1:${executorPort}/readyz`, START_MS);
  } catch (error) {
    await close();
    throw error;
  }
  const db = await sharedDatabase();
  const email = `${unique('staff')}@example.test`;
  await createUser(db, { email, password: PASSWORD, staff: true });
  const home = await createWorkspace(db, unique('staff'));
  await addMember(db, email, home.name, 'user');
  const authClient = new Client(urls[0]!);
  return {
    name: 'separate processes on PostgreSQL',
    auth: authClient,
    private: new Client(urls[1]!),
    public: new Client(urls[2]!),
    healthz: urls.map((url) => `${url}/healthz`),
    staff: await obtain(authClient, email, PASSWORD, home.name),
    owned,
    tails: () => children.map((child) => `[${child.name}]\n${child.tail(15)}`).join('\n'),
    close,
  };
}

async function obtain(auth: Client, email: string, password: string, workspace?: string): Promise<string> {
  const reply = await auth.post('/api/auth/token/obtain', { json: { email, password, ...(workspace ? { workspace } : {}) } });
  if (reply.status !== 200) throw new Error(`login of ${email}: ${reply.status} ${reply.text}`);
  return reply.body.access as string;
}

async function created<T = any>(reply: Promise<{ status: number; body: T; text: string }>, what: string): Promise<T> {
  const { status, body, text } = await reply;
  if (status !== 201 && status !== 200) throw new Error(`${what}: ${status} ${text}`);
  return body;
}

/** A new workspace, made by staff, with a supervisor and a user who registered through their invitations. */
export async function workspaceOn(target: Target): Promise<Workspace> {
  const ws = await created<{ id: number; name: string }>(target.auth.post('/api/auth/workspace', { token: target.staff, json: { name: unique('ws') } }), 'a workspace');
  const member = async (role: 'supervisor' | 'user') => {
    const email = `${unique(role)}@example.test`;
    const invitation = await created<{ invitation_url: string }>(target.auth.post('/api/auth/invitation', { token: target.staff, json: { email, role, workspace_id: ws.id } }), 'an invitation');
    const token = new URL(invitation.invitation_url).searchParams.get('token')!;
    const registration = { token, name: role, surname: 'Isolation', password: PASSWORD, preferred_language: 'en', accept_terms: true, accept_privacy: true };
    await created(target.auth.post('/api/auth/register', { json: registration }), `registering ${email}`);
    return { email, access: await obtain(target.auth, email, PASSWORD, ws.name) };
  };
  const supervisor = await member('supervisor');
  const user = await member('user');
  return { id: ws.id, name: ws.name, supervisor: supervisor.access, user: user.access, userEmail: user.email };
}

export const ISOLATION_PASSWORD = PASSWORD;

/**
 * Registers iris-classifier `version` of a demo model server of its own in
 * the workspace, `input` replacing its input schema, each call to it taking
 * `delayMs`; the registration's reply.
 */
export async function registerModel(target: Target, ws: Workspace, version: string, input?: object, delayMs = 0) {
  const demo = await startDemoModelServer(version, delayMs);
  target.owned.push(demo);
  await demoDeployment(target.private, ws.supervisor, demo.url);
  const card = await upload(target.private, ws.supervisor, await filesystemStorage(target.private, ws.supervisor), '# Iris');
  const payload = modelPayload('iris-classifier', version, card.file_id, input ? { input_schema: { type: 'json', schema: input } } : {});
  return target.private.post('/api/platform_model', { token: ws.supervisor, json: payload });
}

/** A session of the model for the workspace's user; its invocations' path. */
export async function sessionOf(target: Target, ws: Workspace, version: string): Promise<string> {
  const base = `/api/model/iris-classifier/version/${version}`;
  const session = await created<{ id: string }>(target.public.post(`${base}/session`, { token: ws.user }), 'a session');
  return `${base}/session/${session.id}`;
}

/** One timed request of the quiet side: its status and how long it took. */
export interface Probe {
  what: string;
  status: number;
  ms: number;
}

/** Quiet requests, one after the other and each timed, for as long as `attack` runs (at least `minimumMs`). */
export async function probeWhile(requests: Array<{ what: string; send: () => Promise<number> }>, attack: Promise<unknown>, minimumMs = 2_000): Promise<Probe[]> {
  const probes: Probe[] = [];
  let attacking = true;
  const ended = Promise.allSettled([attack, sleep(minimumMs)]).then(() => (attacking = false));
  while (attacking) {
    for (const { what, send } of requests) {
      const started = performance.now();
      const status = await send().catch(() => 0);
      probes.push({ what, status, ms: Math.round(performance.now() - started) });
    }
    await sleep(25);
  }
  await ended;
  await attack;
  return probes;
}

/** A GET whose status is the answer. */
export const statusOf = async (url: string, token?: string): Promise<number> => {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(60_000) });
  await response.arrayBuffer();
  return response.status;
};

/** The probes that were not answered 200, or took longer than `boundMs`: what a test expects empty. */
export function unserved(probes: Probe[], boundMs: number): Probe[] {
  return probes.filter((probe) => probe.status !== 200 || probe.ms > boundMs);
}

/** Each kind of probe's count, median and slowest, for a failed test's message. */
export function summary(probes: Probe[]): string {
  const kinds = [...new Set(probes.map((probe) => probe.what))];
  return kinds
    .map((what) => {
      const times = probes.filter((probe) => probe.what === what).map((probe) => probe.ms).sort((a, b) => a - b);
      return `${what}: ${times.length} probes, p50 ${times[Math.floor(times.length / 2)]} ms, max ${times.at(-1)} ms`;
    })
    .join('; ');
}
