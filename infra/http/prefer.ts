/**
 * RFC 7240 (`Prefer` request header): `1#preference`, each `token [= word]`
 * followed by `;`-separated parameters, a `word` a token or a quoted string.
 * A comma or semicolon inside a quoted string belongs to its value.
 */
const PREFERENCE = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^\s;,"]*))?\s*$/;

/** The seconds of a `wait` preference, as RFC 7240's delta-seconds: digits only, bounded so the number stays exact. */
const DELTA_SECONDS = /^\d{1,9}$/;

/**
 * The `wait` preference of `Prefer` headers, in seconds; undefined when there
 * is none, or when the first one (only the first counts, RFC 7240 §2) is
 * malformed: a server ignores a preference it does not understand.
 */
export function preferredWait(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  for (const preference of splitOutsideQuotes(header, ',')) {
    const [head] = splitOutsideQuotes(preference, ';');
    const match = PREFERENCE.exec(head ?? '');
    if (!match || match[1]!.toLowerCase() !== 'wait') continue;
    const value = unquote(match[2] ?? '');
    return DELTA_SECONDS.test(value) ? Number(value) : undefined;
  }
  return undefined;
}

function unquote(word: string): string {
  return word.startsWith('"') ? word.slice(1, -1).replace(/\\(.)/g, '$1') : word;
}

/** `text` cut at each `separator` that is not inside a quoted string. */
function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
