import type { Cursor } from '../../../infra/db/keyset.js';
import { MAX_LIMIT } from '../../../infra/http/pagination.js';

/** Creation times a read is limited to, both bounds excluded, as the API's created_after and created_before. */
export interface CreatedWindow {
  createdAfter?: string;
  createdBefore?: string;
}

/** Reads the list's rows created in a window: how many, and the newest `limit` of them. */
export type ReadWindow = (window: CreatedWindow & { limit: number }) => Promise<{ total: number; items: Array<{ id: string }> }>;

/**
 * How many rows of a newest-first list are older than a page, given `next`,
 * the cursor of the page after it (none: the page is the last). The keyset
 * orders by creation time then id, so rows created in the same microsecond
 * as the page's last one count when their id is lower. Older rows never
 * change, so predictions queued meanwhile do not shift the count.
 */
export async function olderThanPage(next: Cursor | undefined, read: ReadWindow): Promise<number> {
  if (!next) return 0;
  const [before, sameTime] = await Promise.all([
    read({ createdBefore: next.at, limit: 1 }),
    read({ createdAfter: shiftMicroseconds(next.at, -1), createdBefore: shiftMicroseconds(next.at, 1), limit: MAX_LIMIT }),
  ]);
  return before.total + sameTime.items.filter((row) => row.id < String(next.id)).length;
}

/** A cursor's time (ISO, microseconds, UTC) moved by `delta` microseconds; a Date alone keeps only milliseconds. */
export function shiftMicroseconds(at: string, delta: number): string {
  const micros = Date.parse(`${at.slice(0, 23)}Z`) * 1000 + Number(at.slice(23, 26)) + delta;
  const ms = Math.floor(micros / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(micros - ms * 1000).padStart(3, '0')}Z`;
}
