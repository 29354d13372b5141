import { nameServerSpan } from '../../telemetry/spans.js';
import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { OpenApiDocument } from '../openapi.js';
import { InputError, MethodNotAllowedError } from '../../../kernel/errors/errors.js';
import { requestAjv, responseAjv } from './ajv.js';
import { compileOperations, type CompiledOperation } from './compile.js';
import { PathTable } from './path-table.js';
import { checkRequest } from './request.js';
import { checkResponses } from './response.js';
import { isGuard, type OperationRoutes } from './routes.js';
import { inTurn } from '../pipeline.js';

interface Bound {
  operation: CompiledOperation;
  /** Guards, body parsing, the request's check, then the operation's own handlers, in turn. */
  run: RequestHandler;
}

export interface ServeOptions {
  logger: Logger;
  /** Check every JSON response against the document (tests). */
  validateResponses: boolean;
  /** Reads the body; it runs after the operation's guards, so an anonymous request is a 401 whatever its body. */
  parseBody: RequestHandler;
}

/**
 * The OpenAPI document enforced and its operations served, in one middleware:
 * one lookup finds the operation; its guards authenticate the caller, then
 * the body is read, its compiled validators check the request and its
 * handlers run. A path outside the document goes on (to the 404); a
 * documented path with another method is a 405 with `Allow`.
 */
export function serveOperations(doc: OpenApiDocument, routes: OperationRoutes, options: ServeOptions): RequestHandler {
  const table = bind(doc, routes, options);
  return (req, res, next) => {
    const matched = table.match(req.path);
    if (!matched) return next();
    const bound = matched.methods.get(req.method === 'HEAD' ? 'get' : req.method.toLowerCase());
    if (!bound) return next(new MethodNotAllowedError([...matched.methods.keys()].map((method) => method.toUpperCase())));
    if (!matched.params) return next(new InputError('The path is not valid percent-encoding.'));
    req.params = matched.params;
    res.locals.matched = { operation: bound.operation, params: matched.params } satisfies MatchedOperation;
    nameServerSpan(req.method, bound.operation.path);
    bound.run(req, res, next);
  };
}

/** The documented operation a request reached and its path parameters (express resets `req.params` on its way to the error middleware). */
export interface MatchedOperation {
  operation: CompiledOperation;
  params: Record<string, string>;
}

/** What `serveOperations` matched for this request, if anything. */
export const matchedOperationOf = (res: Response): MatchedOperation | undefined => res.locals.matched as MatchedOperation | undefined;

/** The request against its operation, once the body is read; in tests, its responses too. */
function check(operation: CompiledOperation, options: ServeOptions): RequestHandler {
  return (req, res, next) => {
    checkRequest(operation, req);
    if (options.validateResponses) checkResponses(operation, req, res, options.logger);
    next();
  };
}

/** Each documented operation with its handlers; a handler without an operation, or the reverse, stops the start. */
function bind(doc: OpenApiDocument, routes: OperationRoutes, options: ServeOptions): PathTable<Bound> {
  const handlers = new Map<string, RequestHandler[]>();
  for (const entry of routes.entries) {
    const key = `${entry.method.toUpperCase()} ${entry.path}`;
    if (handlers.has(key)) throw new Error(`${key}: handlers registered twice`);
    handlers.set(key, entry.handlers);
  }
  const table = new PathTable<Bound>();
  for (const operation of compileOperations(doc, { request: requestAjv(), response: options.validateResponses ? responseAjv() : undefined })) {
    const key = `${operation.method.toUpperCase()} ${operation.path}`;
    const bound = handlers.get(key);
    if (!bound) throw new Error(`${key} is in the OpenAPI document but has no handler`);
    handlers.delete(key);
    const firstHandler = bound.findIndex((handler) => !isGuard(handler));
    const guards = firstHandler === -1 ? bound : bound.slice(0, firstHandler);
    table.add(operation.path, operation.method, { operation, run: inTurn(...guards, options.parseBody, check(operation, options), ...bound.slice(guards.length)) });
  }
  const undocumented = [...handlers.keys()];
  if (undocumented.length) throw new Error(`Handlers for operations the OpenAPI document does not have: ${undocumented.join(', ')}`);
  return table;
}
