import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { AppError, OAuthError, OverloadedError, type ErrorDetail } from '../../kernel/errors/errors.js';
import { isDatabaseUnavailable } from '../db/database.js';

interface ErrorBody {
  message: string;
  message_code: string;
  details?: ErrorDetail[];
  error?: string;
  error_description?: string;
}

/** 404 for any route no router answered. */
export const notFoundHandler: RequestHandler = (_req, res) => {
  res.status(404).json({ message: 'Not found.', message_code: 'not_found' });
};

/**
 * The one place errors become responses: typed errors (the OpenAPI layer's
 * included), body-parser errors and database failures. Only 5xx are logged as
 * errors, each as one structured line: nothing is left to express's own
 * handler, which prints bare stack traces.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  // Express tells error handlers by their four parameters: `_next` stays though never called.
  return (error, req, res, _next) => {
    // A download the client stopped reading: the request log's "abandoned" line says it all.
    if (clientLeft(error, res)) return;
    if (res.headersSent) {
      // The answer had begun: cutting the connection is the only way left to tell the client it is incomplete.
      logger.error({ err: error, reqId: req.id, url: req.logUrl }, 'request failed after its answer began');
      res.destroy();
      return;
    }
    const { status, body, headers } = describe(error);
    // Load shed by design is no failure: one error line per refusal would let any client flood the log.
    if (status >= 500 && !(error instanceof OverloadedError)) logger.error({ err: error, reqId: req.id, url: req.logUrl }, 'request failed');
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.status(status).json(body);
  };
}

/** The stream to the client ended early because the client closed the connection. */
function clientLeft(error: unknown, res: Response): boolean {
  return (error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE' && !res.writableFinished;
}

function describe(error: unknown): { status: number; body: ErrorBody; headers: Record<string, string> } {
  if (error instanceof OAuthError) {
    return { status: error.status, headers: error.headers, body: { error: error.code, error_description: error.message, message: error.message, message_code: error.code } };
  }
  if (error instanceof AppError) {
    return { status: error.status, headers: error.headers, body: { message: error.message, message_code: error.code, ...(error.details === undefined ? {} : { details: error.details }) } };
  }
  const e = error as { status?: number; expose?: boolean; type?: string; code?: string };
  if (e.type === 'entity.too.large') return simple(413, 'payload_too_large', 'The request body is too large.');
  if (e.type === 'entity.parse.failed') return simple(400, 'validation_error', 'The request body is not valid JSON.');
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return simple(415, 'unsupported_media_type', 'Unsupported body encoding.');
  // Any other client error of the body parser (a corrupt gzip or deflate body, a stream cut short).
  if (e.status === 415) return simple(415, 'unsupported_media_type', 'Unsupported body encoding.');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true) return simple(400, 'bad_request', 'The request body could not be read: check its Content-Encoding and Content-Length.');
  if (typeof e.code === 'string' && /^(23505)$/.test(e.code)) return simple(409, 'conflict', 'The resource already exists.');
  if (typeof e.code === 'string' && /^(22|23)/.test(e.code)) return simple(400, 'validation_error', 'The request conflicts with a data constraint.');
  if (isDatabaseUnavailable(e)) return { ...simple(503, 'backend_unavailable', 'The database is unavailable. Retry later.'), headers: { 'Retry-After': '1' } };
  return simple(500, 'internal_error', 'Internal server error.');
}

const simple = (status: number, code: string, message: string) => ({ status, headers: {} as Record<string, string>, body: { message, message_code: code } });

