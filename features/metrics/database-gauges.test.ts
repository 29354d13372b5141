import { expect } from 'chai';
import knexFactory from 'knex';
import { createLogger } from '../../infra/logging/logger.js';
import { DatabaseGauges } from './database-gauges.js';
import { invocationsStore, sessionsStore } from '../invocations/store.js';
import { deploymentsStore } from '../deployments/store.js';
import { modelsStore } from '../models/store.js';
import { invocationState } from '../invocations/state.js';
import { queuedPredict, startIrisSession, tenant, type IrisSession, type Tenant } from '../../test/support/fixtures.js';
import { unique } from '../../test/support/platform.js';

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
      const gauges = new DatabaseGauges(unreachable, { sessions: sessionsStore, deployments: deploymentsStore, models: modelsStore, invocations: invocationsStore }, createLogger('silent'));
      await gauges.refresh();
      const text = await gauges.registry.metrics();
      expect(text).to.match(/^didyma_database_metrics_up 0$/m);
      expect(text).to.not.match(/^didyma_sessions\{/m);
    } finally {
      await unreachable.destroy();
    }
  });
});

describe('queue figures per model version and per workspace', () => {
  it('adds up the model versions of a workspace into its own count, as an autoscaler reads it', async () => {
    const workload = [
      { workspace: 'acme', model_code: 'iris', model_version: '1', status: 'QUEUED' as const, n: 3 },
      { workspace: 'acme', model_code: 'wine', model_version: '2', status: 'QUEUED' as const, n: 4 },
      { workspace: 'acme', model_code: 'wine', model_version: '2', status: 'IN_PROGRESS' as const, n: 1 },
      { workspace: 'other', model_code: 'iris', model_version: '1', status: 'QUEUED' as const, n: 5 },
    ];
    const none = async () => [];
    const stores = { sessions: { sessionCounts: none }, deployments: { countsByClass: none }, models: { liveEverywhere: none }, invocations: { workloadCounts: async () => workload } };
    const gauges = new DatabaseGauges({} as never, stores, createLogger('silent'));
    await gauges.refresh();
    const text = await gauges.registry.metrics();
    expect(text).to.include('didyma_invocations_queued{workspace="acme"} 7');
    expect(text).to.include('didyma_invocations_in_flight{workspace="acme"} 1');
    expect(text).to.include('didyma_invocations_queued{workspace="other"} 5');
    expect(text).to.include('didyma_model_invocations_queued{workspace="acme",model_code="wine",model_version="2"} 4');
    expect(text).to.include('didyma_model_invocations_in_flight{workspace="acme",model_code="wine",model_version="2"} 1');
    expect(text).to.not.include('didyma_model_invocations_in_flight{workspace="acme",model_code="iris"');
  });
});

describe('queue figures for /metrics', () => {
  let iris: IrisSession;
  let other: Tenant;
  const version = unique('v');

  before(async () => {
    iris = await startIrisSession(version);
    other = await tenant(iris.t);
  });
  after(() => iris?.close());

  const scrape = async () => (await fetch(`${iris.t.private.baseUrl}/metrics`)).text();

  it("counts each model version's QUEUED and IN_PROGRESS invocations on the private server, and drops a count that fell to zero", async () => {
    const { t, owner, sessionId, modelId } = iris;
    const db = t.platform.db;
    const rows = Array.from({ length: 5 }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }));
    const ids = (await invocationState.appendQueued(db, rows)).map((row) => row!.id);
    // As a claim leaves them, under leases the sweeper leaves alone.
    await db('invocations').whereIn('id', ids.slice(0, 2)).update({ status: 'IN_PROGRESS', started_at: db.fn.now(), lease_expires_at: db.raw(`now() + interval '1 hour'`) });
    await db('invocations').where('id', ids[2]).update({ status: 'COMPLETED', completed_at: db.fn.now() });

    let text = await scrape();
    const model = `workspace="${owner.ws.name}",model_code="iris-classifier",model_version="${version}"`;
    expect(text).to.include(`didyma_model_invocations_queued{${model}} 2`);
    expect(text).to.include(`didyma_model_invocations_in_flight{${model}} 2`);
    // The per-workspace sums, as autoscalers read them.
    expect(text).to.include(`didyma_invocations_queued{workspace="${owner.ws.name}"} 2`);
    expect(text).to.include(`didyma_invocations_in_flight{workspace="${owner.ws.name}"} 2`);
    expect(text).to.not.include(`workspace="${other.ws.name}"`);
    for (const url of [t.auth.baseUrl, t.public.baseUrl]) expect(await (await fetch(`${url}/metrics`)).text(), url).to.not.include('didyma_invocations_queued');

    await db('invocations').whereIn('id', ids).update({ status: 'COMPLETED', completed_at: db.fn.now() });
    text = await scrape();
    for (const name of ['didyma_invocations_queued', 'didyma_invocations_in_flight', 'didyma_model_invocations_queued', 'didyma_model_invocations_in_flight']) {
      expect(text).to.not.include(`${name}{workspace="${owner.ws.name}"`);
    }
  });
});
