const EXCERPT_CHARS = 300;

/**
 * A short, single-line start of an answer's body for error messages. A server
 * that echoes the request's token must not make the platform echo it.
 */
export function excerptOf(text: string, token: string | undefined): string {
  const scrubbed = token ? text.split(token).join('[redacted]') : text;
  const line = scrubbed.replace(/\s+/g, ' ').trim();
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}…` : line;
}
