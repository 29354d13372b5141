// User-given file names travel back to browsers in Content-Disposition. They
// are cleaned so that they name a file and nothing else: no folders, no
// control or direction-override characters that disguise an extension
// ("invoice‮fdp.exe"), no header injection, and a bounded length.

const FALLBACK_NAME = 'file';
const MAX_NAME_BYTES = 255;
const MAX_EXTENSION_LENGTH = 16;
// Bidirectional overrides and isolates, marks and zero-width spaces; ZWJ and
// ZWNJ stay because some scripts and emoji need them.
const INVISIBLE = /[\p{Cc}\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu;

/** A file name safe to store and to offer for download; `file` when nothing usable is left. */
export function safeFileName(name: unknown): string {
  if (typeof name !== 'string') return FALLBACK_NAME;
  const base = name.normalize('NFC').split(/[/\\]/).pop() ?? '';
  const cleaned = base
    .replace(/[\r\n\t\u2028\u2029]+/g, ' ')
    .replace(INVISIBLE, '')
    .replace(/\s+/gu, ' ')
    // Leading dots would hide the file or spell "." / ".."; trailing dots and
    // spaces are dropped by Windows anyway.
    .replace(/^[\s.]+/u, '')
    .replace(/[\s.]+$/u, '');
  return capBytes(cleaned, MAX_NAME_BYTES) || FALLBACK_NAME;
}

/**
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<RFC 5987>`:
 * old clients read the quoted ASCII name, current ones the exact UTF-8 one.
 */
export function contentDisposition(fileName: unknown, disposition: 'attachment' | 'inline' = 'attachment'): string {
  const name = safeFileName(fileName);
  return `${disposition}; filename="${asciiFallback(name)}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}

function asciiFallback(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    // `"` and `\` would end or escape the quoted string; `%` invites
    // percent-decoding by some browsers.
    .replace(/[^\x20-\x7e]|["\\%]/g, '_');
}

function encodeRfc5987(value: string): string {
  // encodeURIComponent leaves ' ( ) * alone, which RFC 5987 attr-char does not allow.
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Shortens to `maxBytes` of UTF-8 without splitting a character, keeping a short extension. */
function capBytes(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 && name.length - dot <= MAX_EXTENSION_LENGTH ? name.slice(dot) : '';
  const budget = maxBytes - Buffer.byteLength(extension);
  let stem = '';
  let stemBytes = 0;
  for (const character of name.slice(0, name.length - extension.length)) {
    const bytes = Buffer.byteLength(character);
    if (stemBytes + bytes > budget) break;
    stem += character;
    stemBytes += bytes;
  }
  return stem.replace(/[\s.]+$/u, '') + extension;
}
