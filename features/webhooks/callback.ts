// Which endpoint of a workspace allows an invocation's `callback_url`: one with
// the same origin (scheme, host and port) whose path is the callback's path or
// a parent of it by whole segments (`/hooks` allows `/hooks` and `/hooks/a`,
// not `/hooks-a`), compared after percent-decoding. The query may differ, so a
// receiver can tell its callers apart. The most specific endpoint wins, the
// oldest among equals.

export interface CallbackCandidate {
  id: number;
  url: string;
}

const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Why the callback's path cannot be compared with an endpoint's, or null. A
 * receiver that decodes `%2F` or `%5C`, or resolves `..`, would serve another
 * path than the one compared, so those are refused, whether the URL parser
 * already resolved the dot segment (`raw`, the text as given) or kept it.
 */
export function callbackPathProblem(raw: string, callback: URL): string | null {
  if (rawPathSegments(raw).some((segment) => DOT_SEGMENT.test(segment))) return 'the path contains a dot segment (. or ..), plain or percent-encoded';
  const decoded = decodedSegments(callback.pathname);
  if (decoded === null) return 'the path contains a malformed percent-encoding';
  if (decoded.some((segment) => segment.includes('/') || segment.includes('\\'))) return 'the path contains an encoded slash or backslash (%2F, %5C)';
  if (decoded.some((segment) => segment === '.' || segment === '..')) return 'the path contains a dot segment (. or ..), plain or percent-encoded';
  return null;
}

/** Whether `endpointUrl` allows `callback` (one `callbackPathProblem` passed). */
export function allowsCallback(endpointUrl: string, callback: URL): boolean {
  const endpoint = new URL(endpointUrl);
  if (endpoint.origin !== callback.origin) return false;
  const parent = decodedSegments(endpoint.pathname);
  const child = decodedSegments(callback.pathname);
  if (parent === null || child === null) return false;
  return parent.length <= child.length && parent.every((segment, index) => segment === child[index]);
}

/** The endpoint that allows `callback`, or undefined. */
export function endpointForCallback<T extends CallbackCandidate>(endpoints: readonly T[], callback: URL): T | undefined {
  const allowing = endpoints.filter((endpoint) => allowsCallback(endpoint.url, callback));
  const specificity = (endpoint: T) => new URL(endpoint.url).pathname.length;
  return allowing.sort((a, b) => specificity(b) - specificity(a) || a.id - b.id)[0];
}

/** The path's segments, percent-decoded, a trailing slash ignored (`/a/b/` is `/a/b`); null when one cannot be decoded. */
function decodedSegments(pathname: string): string[] | null {
  const segments = pathname.split('/').slice(1);
  if (segments.at(-1) === '') segments.pop();
  try {
    return segments.map((segment) => decodeURIComponent(segment));
  } catch {
    return null;
  }
}

/**
 * The path segments of a URL as written, before the URL parser resolves dot
 * segments: after the scheme and authority, up to the query or fragment, with
 * the tabs and newlines the parser would drop removed and `\` as a separator.
 */
function rawPathSegments(raw: string): string[] {
  const text = raw.replace(/[\t\n\r]/g, '').trim();
  const afterAuthority = text.replace(/^[a-z][a-z0-9+.-]*:[/\\]{2}[^/\\?#]*/i, '');
  const path = afterAuthority.split(/[?#]/, 1)[0] ?? '';
  return path.split(/[/\\]/);
}
