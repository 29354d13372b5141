import type { Request, Response } from 'express';

export interface Page {
  limit: number;
  offset: number;
}

/** `limit` (default 100, max 1000) and `offset`; the OpenAPI validator has already checked their types. */
export function pageOf(req: Request): Page {
  const limit = Math.min(Math.max(Number(req.query.limit ?? 100) || 100, 1), 1000);
  const offset = Math.max(Number(req.query.offset ?? 0) || 0, 0);
  return { limit, offset };
}

export function sendPage(res: Response, items: unknown[], total: number): void {
  res.setHeader('X-Total-Count', String(total));
  res.json(items);
}
