import type { RequestHandler } from 'express';
import { InputError } from '../../kernel/errors/errors.js';
import { nulError } from './operations/request.js';
import { onResponseClose } from './response-close.js';

/**
 * Load shedding: at most `max` requests of this server in flight at once; the
 * next one is refused at once with 503 and `Retry-After` instead of waiting in
 * a queue until its client gives up. 0 turns the limit off.
 */
export function inFlightLimit(max: number): RequestHandler {
  let inFlight = 0;
  return (_req, res, next) => {
    if (max <= 0) return next();
    if (inFlight >= max) {
      res.setHeader('Retry-After', '1');
      res.status(503).json({ message: 'The server is busy. Retry later.', message_code: 'overloaded' });
      return;
    }
    inFlight += 1;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      inFlight -= 1;
    };
    slotOf.set(res, release);
    onResponseClose(res, release);
    next();
  };
}

/** The release of each response's in-flight slot. */
const slotOf = new WeakMap<object, () => void>();

/**
 * Gives the response's in-flight slot back before it ends: a long-lived
 * answer (an event stream) is admitted like any request, then counted by a
 * limit of its own, so it never holds the capacity requests need.
 */
export function releaseInFlightSlot(res: object): void {
  slotOf.get(res)?.();
}

/**
 * The nesting depth of JSON text, counted on the raw bytes before parsing
 * (brackets inside strings skipped): true when it goes past `max`.
 */
export function jsonDeeperThan(text: Buffer | string, max: number): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * body-parser `verify` hook: a JSON body nested deeper than `max` is a 400
 * before anything walks it, and one holding a NUL character (which
 * PostgreSQL cannot store in text) a 400 naming the field.
 */
export function checkJsonText(max: number) {
  return (_req: unknown, _res: unknown, body: Buffer) => {
    if (jsonDeeperThan(body, max)) throw new InputError(`The JSON body is nested deeper than ${max} levels.`);
    // The escape is the only way JSON text carries a NUL; the rare body that has one is parsed once more to name it.
    if (body.includes('\\u0000')) {
      const field = nulPath(JSON.parse(body.toString('utf8')) as unknown);
      if (field !== undefined) throw nulError(field || 'body');
    }
  };
}

/** The dotted path of the first string (or key) holding a NUL; undefined when there is none. */
export function nulPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return at;
    const found = nulPath(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
