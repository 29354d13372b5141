import type { Request } from 'express';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { InputError, UnsupportedMediaTypeError } from '../../../kernel/errors/errors.js';
import type { CompiledOperation } from './compile.js';

// A request against its operation: path parameters, query and body, coerced
// to their declared types in place. The first violation becomes a 400 that
// names the field (`request.type: must be equal to one of the allowed values: …`).

export function checkRequest(operation: CompiledOperation, req: Request): void {
  const params = req.params as Record<string, string>;
  refuseNul(params);
  if (operation.pathParameters && !operation.pathParameters(params)) throw violation(operation.pathParameters);
  checkQuery(operation, req);
  checkHeaders(operation, req);
  checkBody(operation, req);
}

/** The operation's declared headers (most have none), checked under their declared names. */
function checkHeaders(operation: CompiledOperation, req: Request): void {
  if (!operation.headers) return;
  const values: Record<string, string> = {};
  for (const name of operation.headers.names) {
    const value = req.headers[name.toLowerCase()];
    if (value !== undefined) values[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (!operation.headers.validate(values)) throw violation(operation.headers.validate);
}

/** NUL cannot be stored in PostgreSQL text: a flat set of strings (path, query, form) holding one is a 400 naming it. */
function refuseNul(values: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string' && value.includes('\u0000')) throw nulError(name);
  }
}

export const nulError = (field: string) => new InputError(`${field}: must not contain NUL characters.`, [{ field, message: 'must not contain NUL characters' }]);

function checkQuery(operation: CompiledOperation, req: Request): void {
  if (!operation.query.validate && !req.url.includes('?')) return; // nothing to check, no defaults to add
  // express computes `req.query` on every read: one parsed object is kept, so what the validator coerces stays.
  const query = req.query as Record<string, unknown>;
  Object.defineProperty(req, 'query', { value: query, writable: true, configurable: true, enumerable: true });
  refuseNul(query);
  for (const name of Object.keys(query)) {
    if (!operation.query.known.has(name)) throw new InputError(`Unknown query parameter '${name}'.`, [{ field: name, message: 'is not a parameter of this operation' }]);
    if (query[name] === '') throw new InputError(`Empty value found for query parameter '${name}'.`, [{ field: name, message: 'must not be empty' }]);
  }
  if (operation.query.validate && !operation.query.validate(query)) throw violation(operation.query.validate);
}

function checkBody(operation: CompiledOperation, req: Request): void {
  const rules = operation.body;
  if (!rules) return;
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!mediaType) {
    if (!rules.required) return;
    throw new UnsupportedMediaTypeError(`A body is required: send it as ${[...rules.byMediaType.keys()].join(' or ')}.`);
  }
  const rule = rules.byMediaType.get(mediaType) ?? (mediaType.endsWith('+json') ? rules.byMediaType.get('application/json') : undefined);
  if (!rule) throw new UnsupportedMediaTypeError(`Unsupported media type ${mediaType}: send ${[...rules.byMediaType.keys()].join(' or ')}.`);
  if (rule === 'streamed') return;
  if (mediaType === 'application/x-www-form-urlencoded' && req.body) refuseNul(req.body as Record<string, unknown>);
  if (req.body === undefined) {
    if (rules.required) throw new InputError('The request body is required.');
    return;
  }
  if (!rule(req.body)) throw violation(rule);
}

function violation(validate: ValidateFunction): InputError {
  const details = (validate.errors ?? []).map(detailOf);
  const first = details[0];
  return new InputError(first ? `${first.field ? `${first.field}: ` : ''}${first.message}` : 'The request is not valid.', details);
}

/** `field` is the dotted path of the offending value (the missing or unexpected property included). */
export function detailOf(error: ErrorObject): { field?: string; message: string } {
  const params = error.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
  const extra = params.missingProperty ?? params.additionalProperty;
  const path = [...error.instancePath.split('/').slice(1), ...(extra === undefined ? [] : [extra])].map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const message = error.keyword === 'enum' && params.allowedValues ? `${error.message}: ${params.allowedValues.join(', ')}` : (error.message ?? 'is not valid');
  return path.length ? { field: path.join('.'), message } : { message };
}
