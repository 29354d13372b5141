import crypto from 'node:crypto';

/** What the draft allows as a key here: 1 to 255 printable ASCII characters (space to tilde). */
export const IDEMPOTENCY_KEY = /^[ -~]{1,255}$/;

/**
 * The request a key stands for: SHA-256 of method, path and the body as
 * canonical JSON (keys sorted), so the same body sent with its keys in
 * another order or other spacing is the same request.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return crypto.createHash('sha256').update(`${method.toUpperCase()} ${path}\n`).update(canonicalJson(body)).digest('hex');
}

/** JSON text with every object's keys in order; `undefined` (no body) is the empty text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, item: unknown) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return item;
    const record = item as Record<string, unknown>;
    return Object.fromEntries(Object.keys(record).sort().map((name) => [name, record[name]]));
  });
}
