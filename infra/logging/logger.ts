import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Log lines are written in chunks (4 KiB, or every 200 ms, whichever comes
 * first) instead of one write per line: on a busy server the request and
 * invocation lines were one system call each. pino flushes what is left when
 * the process exits; a SIGKILL loses at most that last chunk.
 */
const LOG_CHUNK_BYTES = 4096;
const LOG_FLUSH_MS = 200;

/** The platform's logger; `destination` (tests) replaces the buffered standard output. */
export function createLogger(level: string, name = 'didyma', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      name,
      level,
      serializers: { err: safeError },
      // Never let a credential reach a log line, whatever object is logged.
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.secret_key', '*.client_secret', '*.server_proxy_pat', '*.tracking_server_pat', '*.refresh', '*.access'],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false, minLength: LOG_CHUNK_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}

// Credentials an error's text may carry: the user-info part of a URL
// (`amqp://user:password@host`), and signed or tokened query strings of
// outbound URLs (S3 presigned links, `?token=`). Outbound URLs have no
// document to declare their secrets, so these are recognised by form.
const URL_USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
const SECRET_QUERY = /([?&](?:[a-z0-9_-]*(?:token|secret|password|signature|credential|key|pat)[a-z0-9_-]*))=[^&\s#"']*/gi;

/** A string with the credentials of the URLs in it replaced. */
export function withoutUrlCredentials(text: string): string {
  return text.replace(URL_USER_INFO, '$1[redacted]@').replace(SECRET_QUERY, '$1=[redacted]');
}

/**
 * pino's error serializer, minus what must not reach a log line: URL
 * credentials in any text field, and a request body some libraries attach
 * to their errors (body-parser's `body`).
 */
function safeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  delete serialized.body;
  for (const [field, value] of Object.entries(serialized)) {
    if (typeof value === 'string') serialized[field] = withoutUrlCredentials(value);
  }
  return serialized;
}
