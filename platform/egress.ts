import type { Config } from '../kernel/config/config.js';
import { UrlPolicy, type Endpoint } from '../infra/net/url-policy.js';

const list = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

const DEFAULT_PORTS: Record<string, number> = { 'postgres:': 5432, 'postgresql:': 5432, 'amqp:': 5672, 'amqps:': 5671, 'http:': 80, 'https:': 443, 'smtp:': 25, 'smtps:': 465 };

/** The services this process's configuration names: a tenant's URL must never reach them. */
export function ownEndpoints(config: Config): Endpoint[] {
  return [config.databaseUrl, config.databaseListenUrl, config.databaseMigrationUrl, config.amqpUrl, config.prometheusUrl, config.smtpUrl].flatMap((value) => {
    if (!value) return [];
    const url = new URL(value);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    return host ? [{ host, port: url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0) }] : [];
  });
}

/** The outbound policy of every URL a deployment or storage configuration names, from the configuration. */
export function egressPolicy(config: Config): UrlPolicy {
  return new UrlPolicy({
    allowLoopback: config.devMode,
    privateAllow: list(config.egressAllowCidrs),
    ownEndpoints: ownEndpoints(config),
    allow: list(config.urlAllow),
    deny: list(config.urlDeny),
  });
}
