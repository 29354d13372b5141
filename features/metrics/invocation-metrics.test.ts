import { expect } from 'chai';
import { pino } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { InvocationRow } from '../invocations/store.js';
import type { ModelRow, ModelsStore } from '../models/store.js';
import type { WorkspacesStore } from '../identity/workspaces.store.js';
import { InvocationMetrics } from './invocation-metrics.js';

// Workspace and model names come from the stores once per id; here from small tables.
function workspacesStore(names: Record<number, string>, reads: number[]): { workspaces: Pick<WorkspacesStore, 'nameById'>; models: Pick<ModelsStore, 'byId'> } {
  return { workspaces: { nameById: async (_db, id) => (reads.push(id), names[id]) }, models: modelsStore({ 5: ['iris', '2'], 6: ['wine', '1'] }, []) };
}
function modelsStore(models: Record<number, [string, string]>, reads: number[]): Pick<ModelsStore, 'byId'> {
  return {
    byId: async (_db, id) => {
      reads.push(id);
      const found = models[id];
      return found ? ({ id, model_code: found[0], version: found[1] } as ModelRow) : undefined;
    },
  };
}
const db = {} as Db;

/** What a scrape reads once new series have been read at zero by the one before. */
async function secondScrape(metrics: InvocationMetrics): Promise<string> {
  await metrics.registry.metrics();
  return metrics.registry.metrics();
}

describe('invocation metrics: what the executor records per run', () => {
  const model = { model_code: 'iris', version: '2' } as ModelRow;
  const run = (workspaceId: number, type = 'PREDICT') => ({ id: 'i', workspace_id: workspaceId, user_id: 7, type }) as InvocationRow;

  it('counts and times each kind of run in its own series, reading each workspace name once', async () => {
    const reads: number[] = [];
    const metrics = new InvocationMetrics(db, workspacesStore({ 1: 'alpha', 2: 'beta' }, reads), pino({ level: 'silent' }));
    await metrics.record(run(1), model, 'COMPLETED', 0.004);
    await metrics.record(run(1), model, 'COMPLETED', 0.02);
    await metrics.record(run(1), model, 'ERROR', 0.5);
    await metrics.record(run(2, 'EXPLAIN'), model, 'COMPLETED', 0.2);
    const text = await secondScrape(metrics);
    const alpha = 'workspace="alpha",model_code="iris",model_version="2"';
    expect(text).to.include(`didyma_invocations_total{${alpha},user_id="7",status="COMPLETED",type="PREDICT"} 2`);
    expect(text).to.include(`didyma_invocations_total{${alpha},user_id="7",status="ERROR",type="PREDICT"} 1`);
    expect(text).to.include('didyma_invocations_total{workspace="beta",model_code="iris",model_version="2",user_id="7",status="COMPLETED",type="EXPLAIN"} 1');
    expect(text).to.match(new RegExp(`_count\\{${alpha},type="PREDICT",success="true"\\} 2`));
    expect(text).to.match(new RegExp(`_sum\\{${alpha},type="PREDICT",success="true"\\} 0.024`));
    expect(text).to.match(new RegExp(`\\{${alpha},success="false"\\} 0.5`));
    expect(reads).to.deep.equal([1, 2]);
  });

  it('shows a new series at zero for one scrape before its first run, so that a rate counts that run', async () => {
    const metrics = new InvocationMetrics(db, workspacesStore({ 1: 'alpha' }, []), pino({ level: 'silent' }));
    const series = 'didyma_invocations_total{workspace="alpha",model_code="iris",model_version="2",user_id="7",status="COMPLETED",type="PREDICT"}';
    const duration = 'didyma_invocation_duration_seconds_count{workspace="alpha",model_code="iris",model_version="2",type="PREDICT",success="true"}';
    await metrics.record(run(1), model, 'COMPLETED', 0.01);
    await metrics.record(run(1), model, 'COMPLETED', 0.02);
    let text = await metrics.registry.metrics();
    expect(text).to.include(`${series} 0`).and.include(`${duration} 0`);
    text = await metrics.registry.metrics();
    expect(text).to.include(`${series} 2`).and.include(`${duration} 2`);
    // Known series are updated at once; another user's first run makes a new counter series, held once more.
    await metrics.record(run(1), model, 'COMPLETED', 0.03);
    await metrics.record({ ...run(1), user_id: 8 } as InvocationRow, model, 'COMPLETED', 0.04);
    text = await metrics.registry.metrics();
    expect(text).to.include(`${series} 3`).and.include(`${duration} 3`);
    expect(text).to.include(`${series.replace('user_id="7"', 'user_id="8"')} 0`);
    expect(await metrics.registry.metrics()).to.include(`${series.replace('user_id="7"', 'user_id="8"')} 1`).and.include(`${duration} 4`);
  });

  it('records every run right when its series has left the bounded lookup cache', async () => {
    const reads: number[] = [];
    const metrics = new InvocationMetrics(db, workspacesStore({ 1: 'alpha', 2: 'beta', 3: 'gamma' }, reads), pino({ level: 'silent' }), { maxCachedSeries: 2 });
    for (const workspaceId of [1, 2, 3, 1, 3]) await metrics.record(run(workspaceId), model, 'COMPLETED', 0.01);
    const text = await secondScrape(metrics);
    const total = (workspace: string) => `didyma_invocations_total{workspace="${workspace}",model_code="iris",model_version="2",user_id="7",status="COMPLETED",type="PREDICT"}`;
    expect(text).to.include(`${total('alpha')} 2`);
    expect(text).to.include(`${total('beta')} 1`);
    expect(text).to.include(`${total('gamma')} 2`);
    expect(reads, 'names are read once, whatever the series cache forgets').to.deep.equal([1, 2, 3]);
  });

  it('never rejects: a workspace it cannot name is logged, and the next run is recorded', async () => {
    const metrics = new InvocationMetrics(db, workspacesStore({ 1: 'alpha' }, []), pino({ level: 'silent' }));
    await metrics.record(run(9), model, 'COMPLETED', 0.01);
    await metrics.record(run(1), model, 'COMPLETED', 0.01);
    const text = await secondScrape(metrics);
    expect(text).to.not.include('model_code="iris",model_version="2",user_id="7",status="COMPLETED",type="PREDICT"} 2');
    expect(text).to.include('didyma_invocations_total{workspace="alpha",model_code="iris",model_version="2",user_id="7",status="COMPLETED",type="PREDICT"} 1');
  });

  it('times the wait of each first claim per workspace and model version, and leaves retries out', async () => {
    const reads: number[] = [];
    const modelReads: number[] = [];
    const stores = { ...workspacesStore({ 1: 'alpha', 2: 'beta' }, reads), models: modelsStore({ 5: ['iris', '2'], 6: ['wine', '1'] }, modelReads) };
    const metrics = new InvocationMetrics(db, stores, pino({ level: 'silent' }));
    const created = new Date('2026-01-01T00:00:00Z');
    const claim = (workspaceId: number, waitMs: number, attempts = 1, modelId = 5) =>
      ({ id: 'i', workspace_id: workspaceId, model_id: modelId, attempts, created_at: created, started_at: new Date(created.getTime() + waitMs) }) as InvocationRow;
    await metrics.claimed(claim(1, 20));
    await metrics.claimed(claim(1, 3000));
    await metrics.claimed(claim(1, 400, 1, 6));
    await metrics.claimed(claim(2, 700));
    // Its wait since queueing holds the first run and the backoff: not a wait in the queue.
    await metrics.claimed(claim(2, 90_000, 2));
    // A model it cannot name: logged, not recorded, and no rejection.
    await metrics.claimed(claim(1, 10, 1, 9));
    const text = await secondScrape(metrics);
    const alphaIris = 'workspace="alpha",model_code="iris",model_version="2"';
    expect(text).to.include(`didyma_invocation_queue_wait_seconds_count{${alphaIris}} 2`);
    expect(text).to.include(`didyma_invocation_queue_wait_seconds_sum{${alphaIris}} 3.02`);
    expect(text).to.include(`didyma_invocation_queue_wait_seconds_bucket{le="0.05",${alphaIris}} 1`);
    expect(text).to.include(`didyma_invocation_queue_wait_seconds_bucket{le="5",${alphaIris}} 2`);
    expect(text).to.include('didyma_invocation_queue_wait_seconds_count{workspace="alpha",model_code="wine",model_version="1"} 1');
    expect(text).to.include('didyma_invocation_queue_wait_seconds_count{workspace="beta",model_code="iris",model_version="2"} 1');
    expect(text).to.include('didyma_invocation_queue_wait_seconds_sum{workspace="beta",model_code="iris",model_version="2"} 0.7');
    expect(reads).to.deep.equal([1, 2]);
    expect(modelReads, 'each model read once').to.deep.equal([5, 6, 9]);
  });
});
