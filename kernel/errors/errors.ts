// Typed errors thrown by services. One middleware per server maps them to the
// error body `{message, message_code, details?}` (infra/http/errors.ts).

/** The one shape of every item of an error's `details`: the field concerned, when there is one, and what is wrong. */
export interface ErrorDetail {
  field?: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InputError extends AppError {
  constructor(message: string, details?: ErrorDetail[]) {
    super(400, 'validation_error', message, details);
  }
}

export class NotAuthenticatedError extends AppError {
  constructor(message = 'Authentication credentials were not provided or are invalid.') {
    super(401, 'not_authenticated', message, undefined, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class NotAllowedError extends AppError {
  constructor(message = 'You do not have permission to perform this action.') {
    super(403, 'permission_denied', message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found.') {
    super(404, 'not_found', message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = 'conflict') {
    super(409, code, message);
  }
}

/** A request with this Idempotency-Key is still running: the draft's answer to a concurrent duplicate. */
export class IdempotencyKeyInFlightError extends AppError {
  constructor(retryAfterSeconds = 1) {
    super(409, 'conflict', 'A request with this Idempotency-Key is still being processed. Retry later.', undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** An Idempotency-Key already used for a different request (method, path or body) of the same operation. */
export class IdempotencyKeyReusedError extends AppError {
  constructor() {
    super(422, 'idempotency_key_reused', 'This Idempotency-Key was already used for a different request: use a new key for a new request.', [
      { field: 'Idempotency-Key', message: 'was already used for a different request' },
    ]);
  }
}

export class GoneError extends AppError {
  constructor(message: string, code: string) {
    super(410, code, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message = 'The request body is too large.') {
    super(413, 'payload_too_large', message);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: string[]) {
    super(405, 'method_not_allowed', 'Method not allowed.', undefined, { Allow: allowed.join(', ') });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, 'unsupported_media_type', message);
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', `Too many attempts: locked for ${lockedFor(retryAfterSeconds)}. Try again after that.`, undefined, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/** A workspace's quota is used up; the caller may try again later. */
export class QuotaExceededError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'quota_exceeded', message, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

export class BadGatewayError extends AppError {
  constructor(message: string, details?: ErrorDetail[]) {
    super(502, 'bad_gateway', message, details);
  }
}

export class UnavailableError extends AppError {
  constructor(message = 'A dependency of the service is unavailable. Retry later.') {
    super(503, 'backend_unavailable', message, undefined, { 'Retry-After': '1' });
  }
}

/** This server holds as much of a shared capacity as it may: another replica, or a later try, may serve. */
export class OverloadedError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(503, 'overloaded', message, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** RFC 6749 error of the token endpoint: carries `error` and `error_description` too. */
export class OAuthError extends AppError {
  constructor(status: number, error: string, description: string) {
    super(status, error, description, undefined, status === 401 ? { 'WWW-Authenticate': 'Basic realm="didyma"' } : {});
  }
}

/**
 * A device sign-in's poll that brings no tokens (RFC 8628 §3.5), its code as
 * `message_code`: `authorization_pending` (400: ask again after the
 * interval), `slow_down` (429, `Retry-After` the new interval),
 * `expired_token` (400: start again), `access_denied` (403: the person said no).
 */
export class DeviceSignInError extends AppError {
  constructor(code: 'authorization_pending' | 'expired_token' | 'access_denied', message: string);
  constructor(code: 'slow_down', message: string, retryAfterSeconds: number);
  constructor(code: string, message: string, retryAfterSeconds?: number) {
    const status = code === 'slow_down' ? 429 : code === 'access_denied' ? 403 : 400;
    super(status, code, message, undefined, retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** `45 seconds`, `2 minutes`: how long a lock lasts, as a person reads it. */
function lockedFor(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
