import type { OpenApiDocument } from './openapi.js';
import { operationsOf } from './operations/document.js';

// Which parts of a request URL are credentials, read from the OpenAPI
// document's `x-secret: true` parameters: declaring a secret parameter is
// enough to keep it out of every log line.

export const REDACTED = '[redacted]';

/** A path whose segment at `index` is a secret, after these segments (null: a parameter, any value). */
interface SecretSegment {
  before: Array<string | null>;
  index: number;
}

export interface SecretParameters {
  segments: SecretSegment[];
  queryNames: ReadonlySet<string>;
}

/** The secret path and query parameters of the documents, plus query names declared outside them (the dashboard's). */
export function secretParameters(docs: OpenApiDocument[], extraQueryNames: readonly string[] = []): SecretParameters {
  const segments = new Map<string, SecretSegment>();
  const queryNames = new Set(extraQueryNames);
  for (const operation of docs.flatMap(operationsOf)) {
    const templates = operation.path.split('/');
    for (const parameter of operation.parameters.filter((p) => p.secret)) {
      if (parameter.in === 'query') queryNames.add(parameter.name);
      if (parameter.in !== 'path') continue;
      const index = templates.indexOf(`{${parameter.name}}`);
      const before = templates.slice(0, index).map((part) => (/^\{.+\}$/.test(part) ? null : part.toLowerCase()));
      segments.set(`${before.join('/')}#${index}`, { before, index });
    }
  }
  return { segments: [...segments.values()], queryNames };
}

/** The URL with every secret path segment and query value replaced, for a log line. */
export function redactUrl(url: string, secrets: SecretParameters): string {
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const query = mark === -1 ? '' : url.slice(mark + 1);
  return redactPath(path, secrets.segments) + (mark === -1 ? '' : `?${redactQuery(query, secrets.queryNames)}`);
}

function redactPath(path: string, rules: SecretSegment[]): string {
  if (rules.length === 0) return path;
  const parts = path.split('/');
  let changed = false;
  for (const rule of rules) {
    if (parts.length <= rule.index || !rule.before.every((literal, i) => literal === null || decoded(parts[i]!).toLowerCase() === literal)) continue;
    parts[rule.index] = REDACTED;
    changed = true;
  }
  return changed ? parts.join('/') : path;
}

function redactQuery(query: string, names: ReadonlySet<string>): string {
  if (names.size === 0 || query === '') return query;
  return query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = decoded((equals === -1 ? pair : pair.slice(0, equals)).replace(/\+/g, ' '));
      return names.has(name) ? `${pair.slice(0, equals === -1 ? pair.length : equals)}=${REDACTED}` : pair;
    })
    .join('&');
}

/** A segment as the router reads it; an invalid escape stays as written. */
function decoded(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
