import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { OpenApiDocument } from '../openapi.js';
import { InputError, MethodNotAllowedError } from '../../../kernel/errors/errors.js';
import { requestAjv, responseAjv } from './ajv.js';
import { compileOperations, type CompiledOperation } from './compile.js';
import { PathTable } from './path-table.js';
import { checkRequest } from './request.js';
import { checkResponses } from './response.js';
import { runHandlers, type OperationRoutes } from './routes.js';

interface Bound {
  operation: CompiledOperation;
  handlers: RequestHandler[];
}

export interface ServeOptions {
  logger: Logger;
  /** Check every JSON response against the document (tests). */
  validateResponses: boolean;
}

/**
 * The OpenAPI document enforced and its operations served, in one middleware:
 * one lookup finds the operation, its compiled validators check the request,
 * its handlers run. A path outside the document goes on (to the 404); a
 * documented path with another method is a 405 with `Allow`.
 */
export function serveOperations(doc: OpenApiDocument, routes: OperationRoutes, options: ServeOptions): RequestHandler {
  const table = bind(doc, routes, options.validateResponses);
  return (req, res, next) => {
    const matched = table.match(req.path);
    if (!matched) return next();
    const bound = matched.methods.get(req.method === 'HEAD' ? 'get' : req.method.toLowerCase());
    if (!bound) return next(new MethodNotAllowedError([...matched.methods.keys()].map((method) => method.toUpperCase())));
    if (!matched.params) return next(new InputError('The path is not valid percent-encoding.'));
    try {
      checkRequest(bound.operation, req, matched.params);
    } catch (error) {
      return next(error);
    }
    if (options.validateResponses) checkResponses(bound.operation, req, res, options.logger);
    runHandlers(bound.handlers, req, res, next);
  };
}

/** Each documented operation with its handlers; a handler without an operation, or the reverse, stops the start. */
function bind(doc: OpenApiDocument, routes: OperationRoutes, validateResponses: boolean): PathTable<Bound> {
  const handlers = new Map<string, RequestHandler[]>();
  for (const entry of routes.entries) {
    const key = `${entry.method.toUpperCase()} ${entry.path}`;
    if (handlers.has(key)) throw new Error(`${key}: handlers registered twice`);
    handlers.set(key, entry.handlers);
  }
  const table = new PathTable<Bound>();
  for (const operation of compileOperations(doc, { request: requestAjv(), response: validateResponses ? responseAjv() : undefined })) {
    const key = `${operation.method.toUpperCase()} ${operation.path}`;
    const bound = handlers.get(key);
    if (!bound) throw new Error(`${key} is in the OpenAPI document but has no handler`);
    handlers.delete(key);
    table.add(operation.path, operation.method, { operation, handlers: bound });
  }
  const undocumented = [...handlers.keys()];
  if (undocumented.length) throw new Error(`Handlers for operations the OpenAPI document does not have: ${undocumented.join(', ')}`);
  return table;
}
