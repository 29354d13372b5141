import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { AnswerReader } from './answer-reader.js';

// Open-loop load at an even rate over raw keep-alive sockets. The bench and
// the platform share one small machine, so the load generator's own CPU is
// taken from the system it measures: node's HTTP client spent 0.5–0.6 ms of
// CPU per request at 264/s on 2 vCPUs, about 7% of the machine at that
// rate. Here a request is a prebuilt buffer written to a free socket and an
// answer is read just far enough to know its status and where it ends.

export interface PacedOptions {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Buffer;
  /** Paths taken in turn, one per request; absent: the URL's own path. */
  paths?: string[];
  connections: number;
  overallRate: number;
  durationSec: number;
  timeoutMs: number;
  /** The clock that paces requests and times answers; its own in tests, so they check pacing without reading wall time. */
  clock?: Clock;
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<unknown>;
}

const wallClock: Clock = { now: () => performance.now(), sleep };

export interface PacedResult {
  /** Latency of each answered request in ms, from when it was due (unsorted). */
  latencies: number[];
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  seconds: number;
}

interface Pending {
  due: number;
  request: Buffer;
  done: () => void;
}

/** Sends `overallRate × durationSec` requests, one every 1000/rate ms, whatever the answers; resolves when all are settled. */
export async function pacedLoad(options: PacedOptions): Promise<PacedResult> {
  const target = new URL(options.url);
  const clock = options.clock ?? wallClock;
  const requests = new RequestBuffers(options, target);
  const pool = new SocketPool(target, options.connections, options.timeoutMs, clock);
  const interval = 1000 / options.overallRate;
  const total = Math.round(options.durationSec * options.overallRate);
  const settled: Array<Promise<void>> = [];
  const started = clock.now();
  for (let index = 0; index < total; index++) {
    const due = started + index * interval;
    const wait = due - clock.now();
    if (wait > 1) await clock.sleep(wait);
    // Timers keep whole milliseconds and may fire a little early: a request sent before it was due counts
    // from when it was sent, one sent late from when it was due.
    const from = Math.max(due, clock.now());
    settled.push(new Promise<void>((done) => pool.send({ due: from, request: requests.for(index), done })));
  }
  await Promise.all(settled);
  const seconds = (clock.now() - started) / 1000;
  pool.close();
  return { ...pool.outcome(), seconds };
}

/** The bytes of each request, built once per distinct path. */
class RequestBuffers {
  private readonly built = new Map<string, Buffer>();
  private readonly head: string;
  private readonly defaultPath: string;

  constructor(
    private readonly options: PacedOptions,
    target: URL,
  ) {
    const headers: Record<string, string> = { host: target.host, ...options.headers };
    if (options.body) headers['content-length'] = String(options.body.length);
    this.head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    this.defaultPath = `${target.pathname}${target.search}`;
  }

  for(index: number): Buffer {
    const paths = this.options.paths;
    const path = paths?.length ? paths[index % paths.length]! : this.defaultPath;
    let request = this.built.get(path);
    if (!request) {
      const head = Buffer.from(`${this.options.method} ${path} HTTP/1.1\r\n${this.head}\r\n`, 'latin1');
      request = this.options.body ? Buffer.concat([head, this.options.body]) : head;
      this.built.set(path, request);
    }
    return request;
  }
}

/** Up to `size` keep-alive sockets, each with one request in flight; requests wait in order for a free one. */
class SocketPool {
  private readonly idle: Connection[] = [];
  private readonly waiting: Pending[] = [];
  private readonly latencies: number[] = [];
  private readonly statuses: Record<string, number> = {};
  private errors = 0;
  private timeouts = 0;
  private readonly watchdog: NodeJS.Timeout;
  private readonly busy = new Set<Connection>();

  constructor(
    private readonly target: URL,
    private readonly size: number,
    private readonly timeoutMs: number,
    private readonly clock: Clock,
  ) {
    // One timer for every request's timeout, instead of one per request.
    this.watchdog = setInterval(() => this.expire(), Math.min(250, timeoutMs));
  }

  send(pending: Pending): void {
    const connection = this.idle.pop();
    if (connection) this.assign(connection, pending);
    else if (this.busy.size < this.size) this.assign(this.connect(), pending); // none idle: every socket is busy
    else this.waiting.push(pending);
  }

  outcome() {
    return { latencies: this.latencies, statuses: this.statuses, errors: this.errors, timeouts: this.timeouts };
  }

  close(): void {
    clearInterval(this.watchdog);
    for (const connection of [...this.idle, ...this.busy]) connection.socket.destroy();
  }

  private connect(): Connection {
    const connection = new Connection(net.connect({ host: this.target.hostname, port: Number(this.target.port || 80), noDelay: true }), this.clock, {
      answered: (pending, status) => {
        this.latencies.push(this.clock.now() - pending.due);
        this.statuses[status] = (this.statuses[status] ?? 0) + 1;
        pending.done();
        this.release(connection);
      },
      failed: (pending) => {
        this.errors += 1;
        pending.done();
        this.drop(connection);
      },
      closed: () => this.drop(connection),
    });
    return connection;
  }

  private release(connection: Connection): void {
    this.busy.delete(connection);
    if (connection.closing) return this.drop(connection);
    const next = this.waiting.shift();
    if (next) this.assign(connection, next);
    else this.idle.push(connection);
  }

  private assign(connection: Connection, pending: Pending): void {
    this.busy.add(connection);
    connection.start(pending);
  }

  /** A socket that closed or failed: gone from the pool; a waiting request gets a new one. */
  private drop(connection: Connection): void {
    if (connection.dropped) return;
    connection.dropped = true;
    connection.socket.destroy();
    this.busy.delete(connection);
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    const next = this.waiting.shift();
    if (next) this.send(next);
  }

  private expire(): void {
    const now = this.clock.now();
    for (const connection of this.busy) {
      const pending = connection.expireBefore(now - this.timeoutMs);
      if (!pending) continue;
      this.timeouts += 1;
      pending.done();
      this.drop(connection);
    }
  }
}

interface ConnectionEvents {
  answered: (pending: Pending, status: string) => void;
  failed: (pending: Pending) => void;
  closed: () => void;
}

/** One socket and the answer it is reading (see AnswerReader). */
class Connection {
  private current: Pending | undefined;
  private sentAt = 0;
  private reader = new AnswerReader();
  closing = false;
  dropped = false;

  constructor(
    readonly socket: net.Socket,
    private readonly clock: Clock,
    private readonly events: ConnectionEvents,
  ) {
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', () => this.fail());
    socket.on('close', () => this.fail());
  }

  start(pending: Pending): void {
    this.current = pending;
    this.sentAt = this.clock.now();
    this.reader = new AnswerReader();
    this.socket.write(pending.request);
  }

  /** The request in flight when it was sent before `cutoff`; it is no longer this connection's. */
  expireBefore(cutoff: number): Pending | undefined {
    if (!this.current || this.sentAt >= cutoff) return undefined;
    const pending = this.current;
    this.current = undefined;
    return pending;
  }

  private received(chunk: Buffer): void {
    const pending = this.current;
    if (!pending) return this.fail(); // bytes nobody asked for: the stream is out of step
    let answer: { status: string; close: boolean } | undefined;
    try {
      answer = this.reader.read(chunk);
    } catch {
      return this.fail();
    }
    if (!answer) return;
    this.current = undefined;
    this.closing = answer.close;
    this.events.answered(pending, answer.status);
  }

  private fail(): void {
    const pending = this.current;
    this.current = undefined;
    if (pending) this.events.failed(pending);
    else this.events.closed();
  }
}
