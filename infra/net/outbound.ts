import http, { type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import https from 'node:https';
import net, { type LookupFunction, type Socket } from 'node:net';
import { urlToHttpOptions } from 'node:url';

/** The bounds of one outbound HTTP request, in milliseconds. */
export interface Deadlines {
  /** DNS, TCP and TLS of a new connection (a kept-alive one has nothing to wait for). */
  connectMs: number;
  /** From the request's last byte sent to the answer's status line and headers; not armed when it is not below `totalMs`. */
  headersMs: number;
  /** The whole exchange, until the answer's body is read to its end. */
  totalMs: number;
}

export type DeadlineKind = 'connect' | 'headers' | 'total';

const MISSED: Record<DeadlineKind, (ms: number) => string> = {
  connect: (ms) => `no connection within ${ms} ms`,
  headers: (ms) => `no answer within ${ms} ms of the request`,
  total: (ms) => `no complete answer within ${ms} ms`,
};

/** A deadline passed: the request and its socket were destroyed. */
export class DeadlineError extends Error {
  readonly code = 'ETIMEDOUT';

  constructor(
    readonly deadline: DeadlineKind,
    readonly ms: number,
  ) {
    super(MISSED[deadline](ms));
    this.name = 'DeadlineError';
  }
}

/** The process is shutting down: requests still open were cut, and no new one is made. */
export class OutboundClosedError extends Error {
  readonly code = 'ERR_OUTBOUND_CLOSED';

  constructor() {
    super('the process is shutting down');
    this.name = 'OutboundClosedError';
  }
}

export interface OutboundOptions {
  deadlines: Deadlines;
  /** The lookup of each connection to `port` (the URL policy's `lookupFor`); the system resolver when absent. */
  lookupFor?: (port: number) => LookupFunction;
}

/** node:http's `request`, in all its forms: what the minio client accepts as `transport`. */
export type Transport = Pick<typeof http, 'request'>;

type OnResponse = (response: IncomingMessage) => void;

/**
 * node:http and node:https requests of one kind of outbound call (model
 * servers and registries, or storage endpoints): one keep-alive pool, each
 * connection resolved through the URL policy, each request bounded by the
 * deadlines and destroyed, socket included, when one passes. `close` cuts
 * every request still open, so no peer can hold the process at shutdown.
 */
export class Outbound {
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  /** Each open request, with its answer once it has begun. */
  private readonly open = new Map<ClientRequest, Exchange>();
  private closed = false;

  constructor(private readonly options: OutboundOptions) {}

  get deadlines(): Deadlines {
    return this.options.deadlines;
  }

  /** Requests currently open, for tests and logs. */
  get openRequests(): number {
    return this.open.size;
  }

  /**
   * `http.request` or `https.request` by `options.protocol`, on this pool and
   * lookup (whatever agent or lookup `options` names), with the deadlines, some
   * of which `overrides` may change for this request.
   */
  request(options: RequestOptions, callback?: (response: IncomingMessage) => void, overrides: Partial<Deadlines> = {}): ClientRequest {
    const secure = options.protocol === 'https:';
    const port = Number(options.port) || (secure ? 443 : 80);
    const lookup = this.options.lookupFor?.(port);
    if (this.closed) {
      // No agent: on Node.js 24 a request destroyed as soon as it is made still connects and parks its socket in the agent's pool, which nobody empties after close.
      const refused = (secure ? https : http).request({ ...options, agent: undefined, createConnection: unconnected }, callback);
      refused.destroy(new OutboundClosedError());
      return refused;
    }
    const settings: RequestOptions = { ...options, agent: secure ? this.agents.https : this.agents.http, ...(lookup ? { lookup } : {}) };
    const request = secure ? https.request(settings, callback) : http.request(settings, callback);
    const exchange: Exchange = { request };
    this.open.set(request, exchange);
    request.once('response', (response: IncomingMessage) => (exchange.response = response));
    request.once('close', () => this.open.delete(request));
    armDeadlines(exchange, { ...this.options.deadlines, ...overrides });
    return request;
  }

  /** A transport for the minio client whose requests get these deadlines, changed by `overrides`. */
  transport(overrides: Partial<Deadlines> = {}): Transport {
    const request = (target: string | URL | RequestOptions, options?: RequestOptions | OnResponse, callback?: OnResponse) => {
      const base = typeof target === 'string' || target instanceof URL ? urlToHttpOptions(new URL(target)) : target;
      if (typeof options === 'function') return this.request(base, options, overrides);
      return this.request({ ...base, ...options }, callback, overrides);
    };
    return { request };
  }

  /** Cuts every open request and idle connection; later requests fail at once with OutboundClosedError. */
  close(): void {
    this.closed = true;
    for (const exchange of this.open.values()) cut(exchange, new OutboundClosedError());
    this.open.clear();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

interface Exchange {
  request: ClientRequest;
  response?: IncomingMessage;
}

/** Arms the deadlines of a request; the first to pass destroys it, and its answer if one has begun. */
function armDeadlines(exchange: Exchange, deadlines: Deadlines): void {
  const { request } = exchange;
  const timers: NodeJS.Timeout[] = [];
  const arm = (kind: DeadlineKind, ms: number) => {
    const timer = setTimeout(() => cut(exchange, new DeadlineError(kind, ms)), ms);
    timers.push(timer);
    return timer;
  };
  arm('total', deadlines.totalMs);
  request.once('socket', (socket: Socket) => {
    if (!socket.connecting) return;
    const timer = arm('connect', deadlines.connectMs);
    // Over TLS the connection is usable once the handshake is done, which the deadline includes.
    socket.once('encrypted' in socket ? 'secureConnect' : 'connect', () => clearTimeout(timer));
  });
  if (deadlines.headersMs < deadlines.totalMs) {
    let answered = false;
    request.once('response', () => (answered = true));
    request.once('finish', () => {
      if (answered) return;
      const timer = arm('headers', deadlines.headersMs);
      request.once('response', () => clearTimeout(timer));
    });
  }
  request.once('close', () => timers.forEach(clearTimeout));
}

/** The socket of a request made after `close`: one that never connects anywhere. */
function unconnected(): Socket {
  return new net.Socket();
}

function cut({ request, response }: Exchange, error: Error): void {
  // An answer already handed on (a download being streamed) must fail too, not just stop.
  response?.destroy(error);
  request.destroy(error);
}
