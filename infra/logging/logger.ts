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

export function createLogger(level: string, name = 'didyma'): Logger {
  return pino(
    {
      name,
      level,
      // Never let a credential reach a log line, whatever object is logged.
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.secret_key', '*.client_secret', '*.server_proxy_pat', '*.tracking_server_pat', '*.refresh', '*.access'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 1, sync: false, minLength: LOG_CHUNK_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}
