// Which endpoint of a workspace allows an invocation's `callback_url`: one with
// the same origin (scheme, host and port) whose path is the callback's path or
// a parent of it by whole segments (`/hooks` allows `/hooks` and `/hooks/a`,
// not `/hooks-a`). The query may differ, so a receiver can tell its callers
// apart. The most specific endpoint wins, the oldest among equals.

export interface CallbackCandidate {
  id: number;
  url: string;
}

/** The path as a prefix of whole segments: `/a/b` → `/a/b/`. */
const segments = (path: string) => (path.endsWith('/') ? path : `${path}/`);

/** Whether `endpointUrl` allows `callback`. */
export function allowsCallback(endpointUrl: string, callback: URL): boolean {
  const endpoint = new URL(endpointUrl);
  if (endpoint.origin !== callback.origin) return false;
  return callback.pathname === endpoint.pathname || segments(callback.pathname).startsWith(segments(endpoint.pathname));
}

/** The endpoint that allows `callback`, or undefined. */
export function endpointForCallback<T extends CallbackCandidate>(endpoints: readonly T[], callback: URL): T | undefined {
  const allowing = endpoints.filter((endpoint) => allowsCallback(endpoint.url, callback));
  const specificity = (endpoint: T) => new URL(endpoint.url).pathname.length;
  return allowing.sort((a, b) => specificity(b) - specificity(a) || a.id - b.id)[0];
}
