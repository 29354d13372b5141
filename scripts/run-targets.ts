// The /metrics addresses of `didyma dev`, as a Prometheus file_sd list, for
// the Prometheus `make run` starts (scripts/run.sh): read from the same
// configuration `didyma dev` loads, so the ports the user set are the ones scraped.
import { pathToFileURL } from 'node:url';
import { loadDevConfig } from '../kernel/config/config.js';
import type { Config } from '../kernel/config/config.js';

export interface ScrapeTargets {
  targets: string[];
  labels: Record<string, string>;
}

/**
 * The private server (the database figures: sessions, models, the queue) and
 * the in-process executor (per-run counts and latencies). The auth and public
 * servers of the same process add nothing the catalog reads, and scraping them
 * too would count the process's shared figures three times.
 */
export function devScrapeTargets(config: Pick<Config, 'bindHost' | 'privatePort' | 'executorPort' | 'metricsPort'>): ScrapeTargets[] {
  const host = config.bindHost === '0.0.0.0' ? '127.0.0.1' : config.bindHost === '::' ? '[::1]' : config.bindHost.includes(':') ? `[${config.bindHost}]` : config.bindHost;
  // With DIDYMA_METRICS_PORT, the servers' /metrics moves there from the API ports.
  const servers = config.metricsPort ?? config.privatePort;
  return [{ targets: [`${host}:${servers}`, `${host}:${config.executorPort}`], labels: { didyma_run: 'dev' } }];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(devScrapeTargets(loadDevConfig())));
}
