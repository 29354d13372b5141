import crypto from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Level, Logger } from 'pino';
import { onResponseClose } from './response-close.js';

declare module 'http' {
  interface IncomingMessage {
    /** The request id: the caller's X-Request-Id when well formed, else a fresh UUID. */
    id: string;
    /** The URL as log lines and audit records show it: secret parameters redacted. */
    logUrl: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The path of the URL as log lines show it (`logUrl`), without its query string: for spans and audit records. */
export const loggedPath = (req: { logUrl: string }): string => req.logUrl.split('?')[0]!;

/**
 * Request ids and one log line per request at `level`: method, URL (its
 * secret parameters redacted), status and time, never headers or bodies. 5xx
 * lines are errors, whatever the level; requests the client abandoned are
 * logged as such.
 */
export function requestLog(logger: Logger, quiet: ReadonlySet<string>, redact: (url: string) => string = (url) => url, level: Level = 'info'): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    req.id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    req.logUrl = redact(req.originalUrl);
    res.setHeader('X-Request-Id', req.id);
    if (quiet.has(req.url)) return next();
    const started = performance.now();
    onResponseClose(res, () => {
      const line = { reqId: req.id, method: req.method, url: req.logUrl, status: res.statusCode, ms: Math.round((performance.now() - started) * 10) / 10, remoteAddress: req.ip };
      if (!res.writableFinished) logger[level](line, 'request abandoned by the client');
      else if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger[level](line, 'request completed');
    });
    next();
  };
}
