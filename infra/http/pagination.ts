import type { Request, Response } from 'express';
import { badCursor, isCursor, type Cursor, type Page } from '../db/keyset.js';

export type { Page } from '../db/keyset.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** A page of a list endpoint, ready to send. */
export interface ListPage<T> {
  items: T[];
  total: number;
  next?: Cursor;
}

/**
 * The page a list request asks for: `limit` (default 100, max 1000),
 * `offset`, the cursor `after` and the `created_after` / `created_before`
 * window; the OpenAPI validator has already checked their types.
 */
export function pageOf(req: Request): Page {
  const query = req.query as Record<string, unknown>;
  const limit = Math.min(Math.max(Number(query.limit ?? DEFAULT_LIMIT) || DEFAULT_LIMIT, 1), MAX_LIMIT);
  const offset = Math.max(Number(query.offset ?? 0) || 0, 0);
  const text = (name: string) => queryText(req, name);
  const after = text('after');
  return {
    limit,
    offset,
    ...(after !== undefined && { after: decodeCursor(after) }),
    ...(text('created_after') && { createdAfter: text('created_after') }),
    ...(text('created_before') && { createdBefore: text('created_before') }),
  };
}

/** A query parameter's text (list filters), undefined when absent. */
export function queryText(req: Request, name: string): string | undefined {
  const value = (req.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** The list as a plain JSON array, its count in `X-Total-Count` and, when more rows follow, `Link: <…>; rel="next"`. */
export function sendPage(req: Request, res: Response, page: ListPage<unknown>): void {
  res.setHeader('X-Total-Count', String(page.total));
  if (page.next) res.setHeader('Link', `<${nextUrl(req, page.next)}>; rel="next"`);
  res.json(page.items);
}

// Opaque to clients: base64url of JSON, so its form may change without changing the API.
export const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify([cursor.at, cursor.id])).toString('base64url');

export function decodeCursor(text: string): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  const cursor = Array.isArray(parsed) && parsed.length === 2 ? { at: parsed[0], id: parsed[1] } : undefined;
  if (!isCursor(cursor)) throw badCursor();
  return cursor;
}

/**
 * The request's own path and query with the cursor of the next page (and no
 * offset, which the cursor replaces), relative to the server's root: the
 * Host header is the client's to choose, so it never goes into a link.
 */
function nextUrl(req: Request, next: Cursor): string {
  const url = new URL(req.originalUrl, 'http://server.invalid');
  url.searchParams.delete('offset');
  url.searchParams.set('after', encodeCursor(next));
  return `${url.pathname}${url.search}`;
}
