import { BadGatewayError } from '../../kernel/errors/errors.js';

/**
 * Whether repeating a failed request is safe: `always` when the server cannot
 * have acted on it (connection refused, 429, 503), `idempotent` when it may
 * have (reset mid-way, timeout, 502, 504), `never` for anything a retry will
 * not fix.
 */
export type Retryable = 'always' | 'idempotent' | 'never';

export type TransportFailure = 'connect' | 'connect_timeout' | 'timeout' | 'dns' | 'refused_by_policy' | 'too_large' | 'invalid_response' | 'tls' | 'aborted';

/** The request got no usable HTTP answer. Unhandled, it is a 502. */
export class HttpTransportError extends BadGatewayError {
  constructor(
    message: string,
    readonly failure: TransportFailure,
    readonly retryable: Retryable,
  ) {
    super(message);
  }
}

/** The server answered with a status the caller did not accept. Unhandled, it is a 502. */
export class HttpStatusError extends BadGatewayError {
  constructor(
    message: string,
    readonly upstreamStatus: number,
    /** The start of the answer's body, credentials removed: enough to tell what went wrong. */
    readonly excerpt: string,
    readonly retryable: Retryable,
    /** From Retry-After, when the server sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export type HttpClientError = HttpTransportError | HttpStatusError;

export function isHttpClientError(error: unknown): error is HttpClientError {
  return error instanceof HttpTransportError || error instanceof HttpStatusError;
}
