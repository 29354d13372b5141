import { expect } from 'chai';
import { unique, type TestPlatform } from './platform.js';
import { demoDeployment, filesystemStorage, IRIS, modelPayload, startDemoModelServer, tenant, upload, type Tenant } from './fixtures.js';
import type { Client, Reply } from './http.js';
import { COSTLY_ALTERNATIVES } from './hostile-schemas.js';

// The attacks on the validation threads, for a platform in one
// process or a public server of its own: a supervisor registers a costly
// pattern and its workspace floods the threads with bodies that take longer
// than the deadline. Another workspace's checks and every /healthz are still
// served, and the flood is refused with 429 past its workspace's bound.

/** The settings of the server that validates: two threads, a deadline of 2 s, six checks of a workspace waiting. */
export const FLOOD_SETTINGS = { validationThreads: 2, validationTimeoutMs: 2000, validationWaitingPerWorkspace: 6 } as const;

/** Two thousand RE2 instructions, within the limits, all walked for each character of NOISY_BODY (bench/pattern-cost.ts). */
const NOISY_PATTERN = 'x[xy]{1000}[xy]{1000}!';

function randomXy(length: number): string {
  let seed = 7;
  return Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0x10000 ? 'x' : 'y')).join('');
}

/** 17 KB the DFA keeps meeting new states in, never matching (`z` before the `!`): a second or more of work per check. */
const NOISY_BODY = JSON.stringify(`${randomXy(17_000)}z!`);
/** 200 iris rows, 20 KB: too large to check in place, an ordinary check on a thread. */
const QUIET_BODY = JSON.stringify(Array.from({ length: 200 }, () => JSON.parse(IRIS) as unknown));
const ROWS_SCHEMA = {
  type: 'array',
  items: { type: 'object', required: ['sepal_length'], properties: Object.fromEntries(['sepal_length', 'sepal_width', 'petal_length', 'petal_width'].map((name) => [name, { type: 'number' }])) },
};

/**
 * Bounds of "served, not refused": generous, in seconds. A quiet check waits
 * for the first thread a noisy check frees, within its own deadline of
 * 2 s: were it not served in turn, that deadline would refuse it.
 */
const QUIET_BOUND_MS = 5000;
const HEALTHZ_BOUND_MS = 1000;

/** `owner`'s iris-classifier registered on `t` with `input`, after the issue's pattern is refused, and a session of it on `pub`. */
async function modelOf(t: TestPlatform, pub: Client, owner: Tenant, input: object, closing: Array<{ close(): Promise<void> }>) {
  const version = unique('v');
  const demo = await startDemoModelServer(version);
  closing.push(demo);
  await demoDeployment(t.private, owner.token, demo.url);
  const card = await upload(t.private, owner.token, await filesystemStorage(t.private, owner.token), '# card');
  const register = (schema: object) => t.private.post('/api/platform_model', { token: owner.token, json: modelPayload('iris-classifier', version, card.file_id, { input_schema: { type: 'json', schema } }) });
  const refused = await register({ type: 'string', pattern: COSTLY_ALTERNATIVES });
  expect(refused.status, refused.text).to.equal(400);
  expect(refused.body.message).to.match(/^input_schema\.schema\.pattern: the pattern compiles to about 255\d{3} RE2 instructions .*; at most 4000\.$/);
  const registered = await register(input);
  expect(registered.status, registered.text).to.equal(201);
  const base = `/api/model/iris-classifier/version/${version}/session`;
  const session = (await pub.post(base, { token: owner.token })).body.id as string;
  const invoke = (body: string) => pub.post(`${base}/${session}/invocation`, { token: owner.token, json: { type: 'PREDICT', request: { type: 'FEATURES', body } } });
  const rows = async () => Number((await t.platform.db('invocations').where({ session_id: session }).count({ n: '*' }))[0]!.n);
  return { invoke, rows };
}

/** `workers` requests at a time, each sending the next as soon as the last is answered, until `stop` settles; every reply. */
async function flood(send: () => Promise<Reply>, workers: number, stop: Promise<unknown>) {
  let stopped = false;
  void stop.finally(() => (stopped = true));
  const replies: Reply[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!stopped) {
        const reply = await send();
        replies.push(reply);
        if (reply.status === 429) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }),
  );
  return replies;
}

/**
 * Registers on `t` a noisy and a quiet workspace's models; while twelve
 * requests at a time flood `pub` with the noisy one's costly bodies, times
 * five of the quiet one's checks there and every `healthz` client's
 * /healthz. Returns what it saw, for the test's log.
 */
export async function quietWhileValidationFloods(t: TestPlatform, pub: Client, healthz: Client[], closing: Array<{ close(): Promise<void> }>): Promise<string> {
  const noisy = await modelOf(t, pub, await tenant(t), { type: 'string', pattern: NOISY_PATTERN }, closing);
  const quiet = await modelOf(t, pub, await tenant(t), ROWS_SCHEMA, closing);
  expect((await quiet.invoke(QUIET_BODY)).status).to.equal(201); // the threads are started

  let saturated!: () => void;
  const full = new Promise<void>((resolve) => (saturated = resolve));
  let done!: () => void;
  const stop = new Promise<void>((resolve) => (done = resolve));
  const send = async () => {
    const reply = await noisy.invoke(NOISY_BODY);
    if (reply.status === 429) saturated();
    return reply;
  };
  const flooding = flood(send, 12, stop);
  const quietMs: number[] = [];
  const healthzMs: number[] = [];
  try {
    await full; // two checks running and six waiting: the noisy workspace's bound
    for (let i = 0; i < 5; i++) {
      let started = performance.now();
      const reply = await quiet.invoke(QUIET_BODY);
      quietMs.push(performance.now() - started);
      expect(reply.status, reply.text.slice(0, 300)).to.equal(201);
      for (const client of healthz) {
        started = performance.now();
        expect((await client.get('/healthz')).status).to.equal(200);
        healthzMs.push(performance.now() - started);
      }
    }
  } finally {
    done();
  }
  const replies = await flooding;
  const seen = `quiet checks ${quietMs.map((ms) => ms.toFixed(0)).join(', ')} ms; slowest /healthz ${Math.max(...healthzMs).toFixed(0)} ms`;
  expect(Math.max(...quietMs), seen).to.be.below(QUIET_BOUND_MS);
  expect(Math.max(...healthzMs), seen).to.be.below(HEALTHZ_BOUND_MS);

  const refused = replies.filter((reply) => reply.status === 429);
  expect(refused.length).to.be.above(0);
  expect(refused[0]!.body).to.include({ message_code: 'quota_exceeded' });
  expect(refused[0]!.headers.get('retry-after')).to.equal('2');
  expect(replies.filter((reply) => reply.status === 400).length, 'the checks the threads took').to.be.above(0);
  expect(replies.every((reply) => reply.status === 400 || reply.status === 429)).to.equal(true);
  expect(await noisy.rows()).to.equal(0);
  expect(await quiet.rows()).to.equal(6);
  return seen;
}
