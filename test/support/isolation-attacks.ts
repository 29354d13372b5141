import { openEventStream, type EventStream } from './event-stream-client.js';
import { IRIS } from './fixtures.js';
import { COSTLY_ALTERNATIVES } from './hostile-schemas.js';
import { registerModel, sessionOf, statusOf, type Target, type Workspace } from './isolation.js';
import { unique } from './platform.js';
import { until } from './until.js';
import { startWebhookReceiver } from './webhook-receiver.js';

// The attacks of docs/security.md's table of shared resources, as the issue
// that asked for it ran them; the isolation suite checks what each leaves
// served, and the isolation bench times it.

/** A request of the quiet workspace's, timed while an attack runs; its status. */
export interface QuietRequest {
  what: string;
  send: () => Promise<number>;
}

/** An attack made ready: what the quiet side also sends while it runs, the attack itself, and what it leaves to clean. */
export interface Attack<R> {
  quiet: QuietRequest[];
  run(): Promise<R>;
  close(): Promise<void>;
}

/**
 * Near the most RE2 instructions registration admits in one pattern (4,000):
 * a run of `xy` keeps the search meeting new states to the end, about a
 * second for 16,000 characters on this project's machines.
 */
export const ADMITTED_PATTERN = 'x[xy]{1000}[xy]{1000}[xy]{1000}[xy]{850}(x|z)y$';

/** Each server's `/healthz` and another workspace's model list: what every row times. */
export function quietRequests(target: Target, quiet: Workspace): QuietRequest[] {
  return [
    ...target.healthz.map((url) => ({ what: `GET :${new URL(url).port}/healthz`, send: () => statusOf(url) })),
    { what: 'quiet GET /api/model', send: () => statusOf(`${target.public.baseUrl}/api/model`, quiet.user) },
  ];
}

/** A prediction of the quiet workspace's, in a session of its model `version`: 200 when queued. */
export async function quietPrediction(target: Target, quiet: Workspace, version: string): Promise<QuietRequest> {
  const path = await sessionOf(target, quiet, version);
  return {
    what: 'quiet POST invocation',
    send: async () => {
      const reply = await target.public.post(`${path}/invocation`, { token: quiet.user, json: predict(IRIS) });
      return reply.status === 201 ? 200 : reply.status;
    },
  };
}

const predict = (body: string) => ({ type: 'PREDICT', request: { type: 'FEATURES', body } });

/** The event loop: registering the costly pattern; the registration's reply. */
export function costlyRegistration(target: Target, noisy: Workspace): Attack<{ status: number; body: any; text: string }> {
  return { quiet: [], run: () => registerModel(target, noisy, unique('costly'), { type: 'string', pattern: COSTLY_ALTERNATIVES }), close: async () => undefined };
}

/**
 * The event loop and validation threads: `count` strings of `length`
 * characters against ADMITTED_PATTERN, `concurrency` at a time; their statuses.
 */
export async function admittedPatternChecks(target: Target, noisy: Workspace, options: { count: number; length: number; concurrency: number }): Promise<Attack<number[]>> {
  const version = unique('pattern');
  const registered = await registerModel(target, noisy, version, { type: 'string', pattern: ADMITTED_PATTERN });
  if (registered.status !== 201) throw new Error(`registering the admitted pattern: ${registered.status} ${registered.text}`);
  const path = await sessionOf(target, noisy, version);
  const body = JSON.stringify('xy'.repeat(options.length / 2));
  const statuses: number[] = [];
  let sent = 0;
  const sender = async () => {
    while (sent < options.count) {
      sent += 1;
      statuses.push((await target.public.post(`${path}/invocation`, { token: noisy.user, json: predict(body) })).status);
    }
  };
  const run = async () => {
    await Promise.all(Array.from({ length: options.concurrency }, sender));
    return statuses;
  };
  return { quiet: [], run, close: async () => undefined };
}

/**
 * A check of the quiet workspace's that goes to a validation thread: a
 * 20,000-character string against a plain string schema of a model of its
 * own, `version`, registered here.
 */
export async function quietThreadCheck(target: Target, quiet: Workspace): Promise<QuietRequest> {
  const version = unique('quiet-text');
  const registered = await registerModel(target, quiet, version, { type: 'string', maxLength: 100_000 });
  if (registered.status !== 201) throw new Error(`registering the quiet text model: ${registered.status} ${registered.text}`);
  const path = await sessionOf(target, quiet, version);
  const body = JSON.stringify('q'.repeat(20_000));
  return {
    what: 'quiet POST invocation checked on a thread',
    send: async () => {
      const reply = await target.public.post(`${path}/invocation`, { token: quiet.user, json: predict(body) });
      return reply.status === 201 ? 200 : reply.status;
    },
  };
}

/** Event streams: `count` streams of one user opened at once and held; their statuses. */
export async function streamFlood(target: Target, noisy: Workspace, count: number): Promise<Attack<number[]>> {
  const version = unique('streams');
  const registered = await registerModel(target, noisy, version);
  if (registered.status !== 201) throw new Error(`registering the noisy model: ${registered.status} ${registered.text}`);
  const url = `${target.public.baseUrl}${await sessionOf(target, noisy, version)}/events`;
  const streams: EventStream[] = [];
  const open = async () => {
    const stream = await openEventStream(url, noisy.user);
    streams.push(stream);
    return stream.response.status;
  };
  return { quiet: [], run: () => Promise.all(Array.from({ length: count }, open)), close: async () => void (await Promise.all(streams.map((stream) => stream.close()))) };
}

/**
 * Prediction waits: `count` predictions of one workspace sent with `Prefer:
 * wait`, `perRound` at once and a round every 100 ms, against a model whose
 * every call takes `delayMs`, so they pile up waiting; their statuses.
 */
export async function waitFlood(target: Target, noisy: Workspace, options = { count: 200, perRound: 10, delayMs: 1_000, waitSeconds: 20 }): Promise<Attack<number[]>> {
  const version = unique('waits');
  const registered = await registerModel(target, noisy, version, undefined, options.delayMs);
  if (registered.status !== 201) throw new Error(`registering the slow model: ${registered.status} ${registered.text}`);
  const path = await sessionOf(target, noisy, version);
  const run = async () => {
    const replies: Array<Promise<number>> = [];
    for (let sent = 0; sent < options.count; sent += options.perRound) {
      for (let i = 0; i < options.perRound; i++) {
        replies.push(target.public.post(`${path}/invocation`, { token: noisy.user, json: predict(IRIS), headers: { prefer: `wait=${options.waitSeconds}` } }).then((reply) => reply.status));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return Promise.all(replies);
  };
  const close = async () => void (await target.public.post(`${path}/cancel`, { token: noisy.user }));
  return { quiet: [], run, close };
}

/** A prediction of the quiet workspace's sent with `Prefer: wait`: 200 when it came back finished in that one call. */
export async function quietWaitingPrediction(target: Target, quiet: Workspace, version: string): Promise<QuietRequest> {
  const path = await sessionOf(target, quiet, version);
  return {
    what: 'quiet POST invocation with Prefer: wait',
    send: async () => {
      const reply = await target.public.post(`${path}/invocation`, { token: quiet.user, json: predict(IRIS), headers: { prefer: 'wait=20' } });
      return reply.status === 200 && reply.body.status === 'COMPLETED' ? 200 : reply.status;
    },
  };
}

/** Log-in: `perSource` wrong passwords for the victim from each of `sources` addresses; their statuses. */
export function passwordGuesses(target: Target, victim: Workspace, sources: number, perSource: number): Attack<number[]> {
  const guess = (i: number) =>
    target.auth.post('/api/auth/token/obtain', { headers: { 'x-forwarded-for': `203.0.113.${(i % sources) + 1}` }, json: { email: victim.userEmail, password: `wrong-${i}`, workspace: victim.name } });
  return { quiet: [], run: async () => (await Promise.all(Array.from({ length: sources * perSource }, (_, i) => guess(i)))).map((reply) => reply.status), close: async () => undefined };
}

/**
 * Webhook deliveries: `endpoints` endpoints of the noisy workspace (as many
 * as it may have) at a receiver that answers after `delayMs`, and
 * `invocations` predictions whose outcomes go to each; the quiet workspace's
 * own endpoint at a prompt receiver. Resolves once the slow receiver holds
 * deliveries, with how long the quiet workspace's next outcome then takes to
 * arrive.
 */
export async function slowReceiver(target: Target, noisy: Workspace, quiet: Workspace, quietVersion: string, options = { endpoints: 40, invocations: 5, delayMs: 14_000 }): Promise<Attack<{ quietDeliveryMs: number }>> {
  const [slow, prompt] = [await startWebhookReceiver(), await startWebhookReceiver()];
  slow.delay(options.delayMs);
  const version = unique('hooks');
  const registered = await registerModel(target, noisy, version);
  if (registered.status !== 201) throw new Error(`registering the noisy model: ${registered.status} ${registered.text}`);
  await registerEndpoints(target, noisy, slow.url, options.endpoints);
  await registerEndpoints(target, quiet, prompt.url, 1);
  const noisyPath = await sessionOf(target, noisy, version);
  const quietPath = await sessionOf(target, quiet, quietVersion);
  const run = async () => {
    for (let i = 0; i < options.invocations; i++) await target.public.post(`${noisyPath}/invocation`, { token: noisy.user, json: predict(IRIS) });
    await until(async () => slow.pending() > 0, 'the slow receiver to hold deliveries', 60_000);
    const sent = performance.now();
    const reply = await target.public.post(`${quietPath}/invocation`, { token: quiet.user, json: predict(IRIS) });
    if (reply.status !== 201) throw new Error(`the quiet prediction: ${reply.status} ${reply.text}`);
    const delivered = () => prompt.received.some((request) => (JSON.parse(request.body) as { data: { invocation_id?: string } }).data.invocation_id === reply.body.id);
    await until(async () => delivered(), 'the quiet workspace’s delivery', 60_000);
    return { quietDeliveryMs: Math.round(performance.now() - sent) };
  };
  return { quiet: [], run, close: async () => void (await Promise.all([slow.close(), prompt.close()])) };
}

/** Registers up to `count` endpoints of the workspace under `url`, stopping at the first the platform refuses (its maximum). */
async function registerEndpoints(target: Target, ws: Workspace, url: string, count: number): Promise<number> {
  for (let i = 0; i < count; i++) {
    const reply = await target.private.post('/api/webhook', { token: ws.supervisor, json: { url: `${url}/hooks/${i}`, events: ['invocation.completed'] } });
    if (reply.status === 409) return i;
    if (reply.status !== 201) throw new Error(`registering a webhook endpoint: ${reply.status} ${reply.text}`);
  }
  return count;
}
