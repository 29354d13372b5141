import type { RequestHandler, Response } from 'express';

// Small pieces that keep a request's path through express short: every
// middleware registered with `app.use` is one more layer express matches on
// every request, so a server's whole path runs as one layer (infra/http/app.ts).

/**
 * The handlers in turn as one middleware, as an express route runs them:
 * `next()` goes on, `next('route')` skips the rest, and `next(error)`, a throw
 * or a rejected promise leave at once for the error middleware.
 */
export function inTurn(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let index = 0;
    // A falsy reason would read as "go on" to express.
    const fail = (reason: unknown): void => next(reason || new Error('A handler failed without a reason.'));
    const step = (error?: unknown): void => {
      if (error === 'route' || error === 'router') return next();
      if (error) return next(error);
      const handler = handlers[index++];
      if (!handler) return next();
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.then(undefined, fail);
      } catch (thrown) {
        fail(thrown);
      }
    };
    step();
  };
}

/** Exact-path GET (and HEAD) endpoints outside the OpenAPI document: probes, metrics, the document itself. */
export function fixedEndpoints(endpoints: Record<string, RequestHandler>): RequestHandler {
  const byPath = new Map(Object.entries(endpoints));
  return (req, res, next) => {
    const endpoint = req.method === 'GET' || req.method === 'HEAD' ? byPath.get(req.path) : undefined;
    if (!endpoint) return next();
    Promise.resolve(endpoint(req, res, next)).catch(next);
  };
}

/** Runs `parse` only for requests that carry a body (the test body-parser itself makes first). */
export function whenBody(parse: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) return next();
    parse(req, res, next);
  };
}

/**
 * `res.json` without express's detour through `res.send` (which re-parses the
 * content type it has just set, and handles strings, buffers and freshness a
 * JSON body never needs). Same bytes and headers; 204 and 304 carry no body.
 */
export function leanJson(this: Response, body: unknown): Response {
  if (this.statusCode === 204 || this.statusCode === 304) {
    this.removeHeader('Content-Type');
    this.end();
    return this;
  }
  const text = JSON.stringify(body) ?? '';
  if (!this.hasHeader('Content-Type')) this.setHeader('Content-Type', 'application/json; charset=utf-8');
  this.setHeader('Content-Length', Buffer.byteLength(text));
  this.end(text);
  return this;
}
