import { expect } from 'chai';
import knexFactory from 'knex';
import { createLogger } from '../../infra/logging/logger.js';
import { DatabaseGauges } from './database-gauges.js';
import { sessionsStore } from '../invocations/store.js';
import { deploymentsStore } from '../deployments/store.js';
import { modelsStore } from '../models/store.js';

describe('database figures for /metrics', () => {
  it('drops the series and says so, rather than failing the scrape, when the database is unreachable', async () => {
    const quiet = () => undefined;
    const unreachable = knexFactory({
      client: 'pg',
      connection: 'postgres://nobody@127.0.0.1:1/none',
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 2000,
      log: { warn: quiet, error: quiet, debug: quiet, deprecate: quiet },
    });
    try {
      const gauges = new DatabaseGauges(unreachable, { sessions: sessionsStore, deployments: deploymentsStore, models: modelsStore }, createLogger('silent'));
      await gauges.refresh();
      const text = await gauges.registry.metrics();
      expect(text).to.match(/^didyma_database_metrics_up 0$/m);
      expect(text).to.not.match(/^didyma_sessions\{/m);
    } finally {
      await unreachable.destroy();
    }
  });
});
