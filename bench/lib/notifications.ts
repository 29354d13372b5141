// (8) How soon a client is told that an invocation completed: from the row's `completed_at` (the
// database's clock) to the moment a probe hears of it (this process's clock, set on the database's by
// a measured offset). The probe here is a client of the session event stream; another, such as a
// webhook receiver, goes next to it under its own name (and its words in report.ts's PROBE_WORDS).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { percentile, type Brief } from './load.js';

/** The database's clock minus this process's, and half the round trip it was read in (the most it may be off by). */
export interface ClockOffset {
  offsetMs: number;
  uncertaintyMs: number;
}

/** Something told of completions: when (this process's clock, epoch ms) it heard of each invocation. */
export interface CompletionProbe {
  heard: Map<string, number>;
  close(): Promise<void>;
}

export interface NotificationLag {
  count: number;
  /** Invocations COMPLETED in the database that the probe never heard of within the grace. */
  missing: number;
  p50: number;
  p99: number;
}

export interface NotificationsReport {
  rate: number;
  /** Where the rate came from: half (4)'s sustained capacity, or BENCH_NOTIFY_RATE when (8) runs alone. */
  rateFrom: string;
  sessions: number;
  durationSec: number;
  clock: ClockOffset;
  load: Brief;
  /** By probe: `sse`, and whatever is added next to it. */
  lags: Record<string, NotificationLag>;
}

export interface NotificationsControl {
  sessions(n: number): Promise<string[]>;
  clockOffset(): Promise<ClockOffset>;
  /** Every probe, listening to `sessionIds` before the first POST. */
  openProbes(sessionIds: string[]): Promise<Record<string, CompletionProbe>>;
  post(sessionIds: string[], rate: number): Promise<Brief>;
  waitFinal(sessionIds: string[]): Promise<void>;
  /** `completed_at` (epoch ms, the database's clock) of every COMPLETED invocation of `sessionIds`. */
  completedAt(sessionIds: string[]): Promise<Map<string, number>>;
}

/** This process's wall clock with the monotonic clock's resolution. */
export const wallMs = () => performance.timeOrigin + performance.now();

/** The offset from the sample of `samples` read in the shortest round trip, as NTP does. */
export async function clockOffsetOf(readOtherMs: () => Promise<number>, samples = 20, now = wallMs): Promise<ClockOffset> {
  let best: ClockOffset | undefined;
  for (let i = 0; i < samples; i++) {
    const before = now();
    const other = await readOtherMs();
    const after = now();
    const sample = { offsetMs: other - (before + after) / 2, uncertaintyMs: (after - before) / 2 };
    if (!best || sample.uncertaintyMs < best.uncertaintyMs) best = sample;
  }
  return best!;
}

/** From completion (database clock) to each probe's hearing of it (this clock + offset), over every COMPLETED invocation. */
export function lagOf(completedAt: Map<string, number>, heard: Map<string, number>, offsetMs: number): NotificationLag {
  const lags: number[] = [];
  for (const [id, completed] of completedAt) {
    const at = heard.get(id);
    if (at !== undefined) lags.push(at + offsetMs - completed);
  }
  lags.sort((a, b) => a - b);
  return { count: lags.length, missing: completedAt.size - lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99) };
}

/** Probes listening, POSTs at `rate`, the drain, then a grace for the last notifications before the lags are read. */
export async function measureNotifications(control: NotificationsControl, options: { rate: number; rateFrom: string; sessions: number; durationSec: number; graceMs: number }): Promise<NotificationsReport> {
  const sessionIds = await control.sessions(options.sessions);
  const clock = await control.clockOffset();
  const probes = await control.openProbes(sessionIds);
  try {
    const load = await control.post(sessionIds, options.rate);
    await control.waitFinal(sessionIds);
    const completedAt = await control.completedAt(sessionIds);
    await allHeard(Object.values(probes), [...completedAt.keys()], options.graceMs);
    const lags = Object.fromEntries(Object.entries(probes).map(([name, probe]) => [name, lagOf(completedAt, probe.heard, clock.offsetMs)]));
    return { rate: options.rate, rateFrom: options.rateFrom, sessions: options.sessions, durationSec: options.durationSec, clock, load, lags };
  } finally {
    await Promise.all(Object.values(probes).map((probe) => probe.close()));
  }
}

async function allHeard(probes: CompletionProbe[], ids: string[], graceMs: number): Promise<void> {
  const until = Date.now() + graceMs;
  while (Date.now() < until && !probes.every((probe) => ids.every((id) => probe.heard.has(id)))) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * A client of each session's event stream, noting when each invocation's COMPLETED event arrived; it
 * resolves once every stream answered.
 */
export async function sseProbe(baseUrl: string, paths: string[], headers: Record<string, string>): Promise<CompletionProbe> {
  const heard = new Map<string, number>();
  const aborter = new AbortController();
  const bodies = await Promise.all(
    paths.map(async (path) => {
      const response = await fetch(`${baseUrl}${path}`, { headers: { ...headers, accept: 'text/event-stream' }, signal: aborter.signal });
      if (response.status !== 200 || !response.body) throw new Error(`event stream ${path}: ${response.status} ${await response.text()}`);
      return response.body;
    }),
  );
  const readers = bodies.map((body) =>
    readCompletions(body, heard).catch((error: unknown) => {
      if (!aborter.signal.aborted) throw error;
    }),
  );
  return {
    heard,
    close: async () => {
      aborter.abort();
      await Promise.allSettled(readers);
    },
  };
}

/** Notes the arrival time of every COMPLETED event of a Server-Sent Events body, the first of each invocation. */
async function readCompletions(body: ReadableStream<Uint8Array>, heard: Map<string, number>): Promise<void> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const at = wallMs();
    pending += decoder.decode(chunk, { stream: true });
    const frames = pending.split('\n\n');
    pending = frames.pop() ?? '';
    for (const id of completedIn(frames)) if (!heard.has(id)) heard.set(id, at);
  }
}

/** The invocation ids of the COMPLETED `invocation` events among whole frames. */
export function completedIn(frames: string[]): string[] {
  const ids: string[] = [];
  for (const frame of frames) {
    const lines = frame.split('\n');
    if (!lines.includes('event: invocation')) continue;
    const data = lines.find((line) => line.startsWith('data: '));
    const event = data ? (JSON.parse(data.slice('data: '.length)) as { invocation_id: string; status: string }) : undefined;
    if (event?.status === 'COMPLETED') ids.push(event.invocation_id);
  }
  return ids;
}

/**
 * A webhook receiver on loopback, registered for `invocation.completed` by
 * `register` (which answers how to unregister it): it notes when each
 * invocation's delivery arrived and answers 2xx at once, so the time noted is
 * the time of the receiver's 2xx.
 */
export async function webhookProbe(register: (receiverUrl: string) => Promise<() => Promise<void>>): Promise<CompletionProbe> {
  const heard = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = wallMs();
      const id = completedInvocationOf(Buffer.concat(chunks).toString('utf8'));
      if (id && !heard.has(id)) heard.set(id, at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const unregister = await register(`http://127.0.0.1:${(server.address() as AddressInfo).port}/didyma`);
  return {
    heard,
    close: async () => {
      await unregister();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

/** The invocation a Standard Webhooks body of `invocation.completed` names; undefined for any other. */
export function completedInvocationOf(body: string): string | undefined {
  try {
    const event = JSON.parse(body) as { type?: string; data?: { invocation_id?: string } };
    return event.type === 'invocation.completed' ? event.data?.invocation_id : undefined;
  } catch {
    return undefined;
  }
}
