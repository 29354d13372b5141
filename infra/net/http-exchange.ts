import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { urlToHttpOptions } from 'node:url';
import { HttpTransportError, type Retryable, type TransportFailure } from './errors.js';
import { DeadlineError, OutboundClosedError, type Deadlines, type Outbound } from './outbound.js';
import { AddressDeniedError } from './url-policy.js';

export interface Exchange {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
  /** Pool, URL policy lookup and deadlines of the request. */
  outbound: Outbound;
  /** Deadlines of this request that differ from the outbound's. */
  deadlines?: Partial<Deadlines>;
  maxResponseBytes: number;
  signal?: AbortSignal;
  /** Method and URL without its query, for messages. */
  label: string;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

type Finish = (error: HttpTransportError | null, response?: RawResponse) => void;

/** One HTTP request and its complete, size-bounded answer. Any status resolves; only transport failures reject. */
export function exchange(x: Exchange): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let request: ClientRequest | undefined;
    let settled = false;
    const onAbort = () => finish(new HttpTransportError(`${x.label} was cancelled`, 'aborted', 'never'));
    const finish: Finish = (error, response) => {
      if (settled) return;
      settled = true;
      x.signal?.removeEventListener('abort', onAbort);
      if (error) {
        request?.destroy();
        reject(error);
      } else resolve(response as RawResponse);
    };
    if (x.signal?.aborted) return onAbort();
    x.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      request = x.outbound.request({ ...urlToHttpOptions(x.url), method: x.method, headers: x.headers }, (response) => readBody(response, x, finish), x.deadlines);
    } catch (error) {
      // Thrown synchronously for an invalid header value; node's message names the header, not its value.
      return finish(failure(x, 'invalid_response', 'never', `the request could not be built (${(error as Error).message})`));
    }
    const sent = request;
    sent.on('error', (error: NodeJS.ErrnoException) => finish(transportError(error, x, sent.reusedSocket)));
    sent.end(x.body);
  });
}

function readBody(response: IncomingMessage, x: Exchange, finish: Finish): void {
  const tooLarge = () => failure(x, 'too_large', 'never', `the answer is larger than ${x.maxResponseBytes} bytes`);
  if (Number(response.headers['content-length']) > x.maxResponseBytes) return finish(tooLarge());
  const chunks: Buffer[] = [];
  let size = 0;
  response.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > x.maxResponseBytes) finish(tooLarge());
    else chunks.push(chunk);
  });
  response.on('end', () => finish(null, { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks, size) }));
  response.on('error', (error: NodeJS.ErrnoException) => finish(cutShort(error, x) ?? failure(x, 'connect', 'idempotent', 'the connection closed before the answer was complete')));
  response.on('close', () => {
    if (!response.complete) finish(failure(x, 'connect', 'idempotent', 'the connection closed before the answer was complete'));
  });
}

function failure(x: Exchange, kind: TransportFailure, retryable: Retryable, what: string): HttpTransportError {
  return new HttpTransportError(`${x.label} failed: ${what}`, kind, retryable);
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_)/;

/** A passed deadline or the process's shutdown, which cut the request. */
function cutShort(error: Error, x: Exchange): HttpTransportError | undefined {
  if (error instanceof OutboundClosedError) return new HttpTransportError(`${x.label} was cancelled: ${error.message}`, 'aborted', 'never');
  if (!(error instanceof DeadlineError)) return undefined;
  // A request that never connected was never seen by the server.
  return error.deadline === 'connect' ? failure(x, 'connect_timeout', 'always', error.message) : failure(x, 'timeout', 'idempotent', error.message);
}

/** Names the failure and says whether repeating the request could help and is safe. */
function transportError(error: NodeJS.ErrnoException, x: Exchange, reusedSocket: boolean): HttpTransportError {
  const cut = cutShort(error, x);
  if (cut) return cut;
  if (error instanceof AddressDeniedError) return new HttpTransportError(`${x.label} was refused by the outbound URL policy: ${error.message}`, 'refused_by_policy', 'never');
  const code = error.code ?? '';
  switch (code) {
    case 'ECONNREFUSED':
      return failure(x, 'connect', 'always', 'connection refused');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return failure(x, 'connect', 'always', 'host unreachable');
    case 'ENOTFOUND':
      return failure(x, 'dns', 'never', 'host name not found');
    case 'EAI_AGAIN':
      return failure(x, 'dns', 'always', 'temporary failure resolving the host name');
    case 'ECONNRESET':
      // A keep-alive connection the server closed while idle: the request never reached it.
      return failure(x, 'connect', reusedSocket ? 'always' : 'idempotent', 'connection reset');
  }
  if (TLS_CODE.test(code)) return failure(x, 'tls', 'never', `TLS error (${code})`);
  return failure(x, 'connect', 'idempotent', code ? `network error (${code})` : error.message);
}
