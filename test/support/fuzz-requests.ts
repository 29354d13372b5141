import zlib from 'node:zlib';
import type { RequestOptions } from './http.js';

// How the fuzz test puts a generated request on the wire: path segments,
// bodies in the claimed media type and Content-Encoding, and a bounded pool.

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sets the body, its Content-Type and Content-Encoding on the options; returns the text sent, for the leak check. */
export function encodeBody(request: { content: Record<string, unknown>; body: unknown; contentType: string; encoding: string | undefined }, options: RequestOptions & { headers: Record<string, string> }): string {
  const { body, contentType } = request;
  if (body === undefined) return '';
  const raw = isRecord(body) && 'raw' in body ? String(body.raw) : undefined;
  if (request.content['multipart/form-data'] && raw === undefined && contentType.startsWith('multipart/form-data')) {
    options.multipart = multipart(body);
    return JSON.stringify(body);
  }
  let text: string;
  if (raw !== undefined) text = raw;
  else if (contentType === 'application/x-www-form-urlencoded') text = new URLSearchParams(formFields(body)).toString();
  else text = JSON.stringify(body) ?? '';
  options.headers['content-type'] = contentType;
  options.rawBody = encoded(text, request.encoding, options.headers);
  return text;
}

/** The body bytes under the chosen Content-Encoding: real ones compress, the `corrupt-` ones only claim to. */
function encoded(text: string, encoding: string | undefined, headers: Record<string, string>): string | Buffer {
  if (encoding === undefined) return text;
  const bytes = Buffer.from(text);
  const compress: Record<string, (b: Buffer) => Buffer> = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync };
  if (encoding.startsWith('corrupt-')) {
    headers['content-encoding'] = encoding.slice('corrupt-'.length);
    return Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), bytes.subarray(0, 64)]);
  }
  headers['content-encoding'] = encoding;
  return compress[encoding] ? compress[encoding](bytes) : bytes;
}

function formFields(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { value: String(JSON.stringify(value)) };
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]));
}

/**
 * A path segment for a generated value. Three values would address another
 * route, so a blank stands for them: the empty one (`/x/` is `/x`), and the
 * dot segments `.` and `..`, which every WHATWG client (fetch, browsers)
 * removes before sending, `%2E` and `%2E%2E` too.
 */
export function segment(value: string): string {
  const encoded = encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'));
  return encoded === '' || encoded === '.' || encoded === '..' ? '%20' : encoded;
}

/** Multipart bodies: a generated record becomes fields, each a file part named after its key. */
function multipart(value: unknown): FormData {
  const form = new FormData();
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      form.append(key, new Blob([typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]), `${key}.bin`);
    }
  }
  return form;
}

/** Runs `work` over the items, at most `limit` at a time. */
export async function inPool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
