import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { constantTimeEqual, sha256 } from '../crypto/random.js';

/** A set of metrics one `/metrics` serves; `refresh` runs before each scrape. */
export interface MetricsPart {
  registry: Registry;
  refresh?: () => Promise<void>;
}

/** Serves `/metrics`; works as an express handler and in a bare node:http server. */
export type MetricsHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface ExpositionOptions {
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  token?: string;
  logger: Logger;
}

/** The Prometheus text exposition of the given parts, concatenated. */
export function metricsHandler(parts: readonly MetricsPart[], options: ExpositionOptions): MetricsHandler {
  return async (req, res) => {
    if (options.token && !bearerMatches(req.headers.authorization, options.token)) {
      send(res, 401, 'application/json', JSON.stringify({ message: 'Scraping /metrics needs the metrics bearer token.', message_code: 'not_authenticated' }), { 'WWW-Authenticate': 'Bearer' });
      return;
    }
    try {
      await Promise.all(parts.map((part) => part.refresh?.()));
      const texts = await Promise.all(parts.map((part) => part.registry.metrics()));
      send(res, 200, parts[0]?.registry.contentType ?? 'text/plain; version=0.0.4; charset=utf-8', texts.map((text) => (text.endsWith('\n') || !text ? text : `${text}\n`)).join(''));
    } catch (error) {
      options.logger.error({ err: error }, 'could not render /metrics');
      send(res, 500, 'application/json', JSON.stringify({ message: 'Internal server error.', message_code: 'internal_error' }));
    }
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', ...headers });
  res.end(body);
}

/** Constant-time comparison of the presented bearer token with the configured one (digests: equal lengths). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '';
  return constantTimeEqual(sha256(presented), sha256(token));
}
