const EXCERPT_CHARS = 300;

/**
 * A short, single-line summary of an error answer for messages users read.
 * Servers put the useful part in different places: a JSON `message`, `error`
 * or `detail` field (MLflow, MLServer, FastAPI), or the last line of a Python
 * traceback; otherwise the beginning and the end of the body are kept. A
 * server that echoes the request's token must not make the platform echo it.
 */
export function excerptOf(text: string, token: string | undefined): string {
  const scrubbed = token ? text.split(token).join('[redacted]') : text;
  const line = (reasonOf(scrubbed) ?? scrubbed).replace(/\s+/g, ' ').trim();
  if (line.length <= EXCERPT_CHARS) return line;
  const half = Math.floor(EXCERPT_CHARS / 2);
  return `${line.slice(0, half)} … ${line.slice(-half)}`;
}

function reasonOf(text: string): string | undefined {
  const fromJson = jsonReason(text);
  if (fromJson) return fromJson;
  if (text.includes('Traceback (most recent call last)')) {
    const lines = text.trim().split(/\r?\n/).filter((l) => l.trim() !== '');
    return lines.at(-1);
  }
  return undefined;
}

function jsonReason(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  for (const key of ['message', 'error', 'detail']) {
    const value = record[key];
    if (typeof value === 'string' && value.trim()) {
      const code = typeof record.error_code === 'string' ? `${record.error_code}: ` : '';
      return `${code}${value}`;
    }
  }
  return undefined;
}
