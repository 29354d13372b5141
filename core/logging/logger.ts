import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'modelplane'): Logger {
  return pino({
    name,
    level,
    // Never let a credential reach a log line, whatever object is logged.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.secret_key', '*.client_secret', '*.server_proxy_pat', '*.tracking_server_pat', '*.refresh', '*.access'],
      censor: '[redacted]',
    },
  });
}
