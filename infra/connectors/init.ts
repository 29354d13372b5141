import { InputError } from '../../kernel/errors/errors.js';
import type { UrlPolicy } from '../net/url-policy.js';
import type { ConnectorInit } from './types.js';

/** The init parameters a connector class takes. */
export interface InitSpec {
  className: string;
  /** Base URLs in order of preference; at least one is required. */
  urls: readonly string[];
  /** URLs the class cannot do without, each with the reason a missing one is refused. */
  required?: Readonly<Record<string, string>>;
  /** Bearer tokens: encrypted at rest, never shown. */
  secrets: readonly string[];
}

const TOKEN = /^[\x21-\x7e]{1,8192}$/;

/**
 * Checks a deployment's init object against the class's parameters and
 * returns it normalized. Every error names the offending field.
 */
export function validateInit(init: unknown, field: string, spec: InitSpec, policy: UrlPolicy): ConnectorInit {
  if (typeof init !== 'object' || init === null || Array.isArray(init)) throw invalid(field, 'must be an object');
  const known = [...spec.urls, ...spec.secrets];
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(init)) {
    const path = `${field}.${key}`;
    if (!known.includes(key)) throw invalid(path, `is not a parameter of ${spec.className}; its parameters are ${known.join(', ')}`);
    // Clients often send every parameter and leave the unused ones empty.
    if (value === null || value === '') continue;
    if (typeof value !== 'string') throw invalid(path, 'must be a string');
    result[key] = spec.urls.includes(key) ? baseUrl(value, path, policy) : token(value, path);
  }
  for (const [key, why] of Object.entries(spec.required ?? {})) {
    if (!(key in result)) throw new InputError(`${field}.${key} is required: ${why}`, [{ field: `${field}.${key}`, message: 'is required' }]);
  }
  if (!spec.urls.some((key) => key in result)) throw missingUrl(field, spec.urls);
  return Object.freeze(result);
}

function baseUrl(value: string, path: string, policy: UrlPolicy): string {
  if (value.length > 2048) throw invalid(path, 'is longer than 2048 characters');
  const url = policy.checkSyntax(value.trim(), path);
  // Endpoint paths are appended to the base, which a query or fragment would break.
  if (url.search || url.hash) throw invalid(path, 'must not have a query or a fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function token(value: string, path: string): string {
  // Never quote the value: it is a credential.
  if (!TOKEN.test(value)) throw invalid(path, 'must be a token of printable characters without spaces (at most 8192)');
  return value;
}

function missingUrl(field: string, urls: readonly string[]): InputError {
  const [first, ...others] = urls.map((key) => `${field}.${key}`);
  return new InputError(`${first} is required${others.length > 0 ? ` (or ${others.join(', ')})` : ''}`, [{ field: first, message: 'is required' }]);
}

function invalid(field: string, problem: string): InputError {
  return new InputError(`${field} ${problem}`, [{ field, message: problem }]);
}

/** A path segment from a model code or version, safe whatever characters it holds. */
export const segment = (value: string): string => encodeURIComponent(value);
