import type { RequestHandler } from 'express';

const GUARD = Symbol('guard');

/** Marks a handler as an operation's guard (authentication, role): guards run before the body is read or checked. */
export function asGuard(handler: RequestHandler): RequestHandler {
  return Object.assign(handler, { [GUARD]: true });
}

export const isGuard = (handler: RequestHandler) => (handler as { [GUARD]?: boolean })[GUARD] === true;

/**
 * The handlers of a server's documented operations, registered the way express
 * routes are (`routes.get('/api/model/:modelCode', guard, handler)`), but bound
 * to the OpenAPI document's operations instead of matched again by a router:
 * `serveOperations` checks, at start-up, that every operation has handlers and
 * every handler an operation.
 */
export class OperationRoutes {
  readonly entries: Array<{ method: string; path: string; handlers: RequestHandler[] }> = [];

  get(path: string, ...handlers: RequestHandler[]): this {
    return this.add('get', path, handlers);
  }
  post(path: string, ...handlers: RequestHandler[]): this {
    return this.add('post', path, handlers);
  }
  put(path: string, ...handlers: RequestHandler[]): this {
    return this.add('put', path, handlers);
  }
  patch(path: string, ...handlers: RequestHandler[]): this {
    return this.add('patch', path, handlers);
  }
  delete(path: string, ...handlers: RequestHandler[]): this {
    return this.add('delete', path, handlers);
  }

  private add(method: string, expressPath: string, handlers: RequestHandler[]): this {
    // `/x/:id` is the document's `/x/{id}`.
    this.entries.push({ method, path: expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}'), handlers });
    return this;
  }
}

export const operationRoutes = () => new OperationRoutes();
