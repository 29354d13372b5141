import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Db } from '../../infra/db/database.js';
import type { WorkspacesStore } from '../identity/workspaces.store.js';
import type { InvocationRow } from '../invocations/store.js';
import type { ModelRow, ModelsStore } from '../models/store.js';
import { metricNames } from './names.js';
import { HeldUntilScraped } from './held-until-scraped.js';

/** Bounds the lookup cache only; prom-client keeps every series it has seen either way. */
const MAX_CACHED_SERIES = 10_000;

interface RunSeries {
  total: { inc(): void };
  duration: { observe(value: number): void };
  last: { set(value: number): void };
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
// A wait runs from milliseconds on an idle platform to an hour behind a full queue.
const QUEUE_WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * What the executors observe per run: counts by status and type, durations,
 * and the latest duration per model, fed by the executor's `onFinished` hook;
 * queue waits per model version, fed by its `onClaimed` hook. Served on the
 * executor's `/metrics`.
 */
export class InvocationMetrics {
  readonly registry = new Registry();
  // A new series shows 0 for one scrape before its first update (HeldUntilScraped); the first instrument a scrape reads says when one begins.
  private readonly held = new HeldUntilScraped();
  private readonly total = new Counter({
    name: metricNames.invocations,
    help: 'Invocations the executor finished, by final status (COMPLETED, ERROR) and type (PREDICT, EXPLAIN).',
    labelNames: ['workspace', 'model_code', 'model_version', 'user_id', 'status', 'type'] as const,
    registers: [this.registry],
    collect: () => this.held.scraped(),
  });
  private readonly duration = new Histogram({
    name: metricNames.invocationDuration,
    help: 'Time from claiming an invocation to committing its result, in seconds.',
    labelNames: ['workspace', 'model_code', 'model_version', 'type', 'success'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly last = new Gauge({
    name: metricNames.lastInvocationDuration,
    help: 'Duration of the latest finished run of each model, in seconds.',
    labelNames: ['workspace', 'model_code', 'model_version', 'success'] as const,
    registers: [this.registry],
  });
  private readonly queueWait = new Histogram({
    name: metricNames.queueWait,
    help: 'Time from queueing an invocation to its first claim by an executor, in seconds.',
    labelNames: ['workspace', 'model_code', 'model_version'] as const,
    buckets: QUEUE_WAIT_BUCKETS,
    registers: [this.registry],
  });
  // Workspace names never change once created, so a name read once stays right.
  private readonly workspaceNames = new Map<number, string>();
  // A model id keeps its code and version for life; bounded like the series, as models come and go.
  private readonly modelNames: LRUCache<number, { model_code: string; model_version: string }>;
  // The series one kind of run updates, found once: prom-client hashes a label
  // object on every update, three times per invocation otherwise.
  private readonly series: LRUCache<string, RunSeries>;
  // Every series made, by instrument, as prom-client keeps them too: only a new one is made at zero.
  private readonly made = { total: new Set<string>(), duration: new Set<string>(), queueWait: new Set<string>() };

  constructor(
    private readonly db: Db,
    private readonly stores: { workspaces: Pick<WorkspacesStore, 'nameById'>; models: Pick<ModelsStore, 'byId'> },
    private readonly logger: Logger,
    options: { maxCachedSeries?: number } = {},
  ) {
    this.series = new LRUCache({ max: options.maxCachedSeries ?? MAX_CACHED_SERIES });
    this.modelNames = new LRUCache({ max: options.maxCachedSeries ?? MAX_CACHED_SERIES });
  }

  /** Records one finished run. Never rejects: a metric must not fail an invocation. */
  async record(row: InvocationRow, model: ModelRow, outcome: 'COMPLETED' | 'ERROR', seconds: number): Promise<void> {
    try {
      const { key, series } = await this.seriesOf(row, model, outcome);
      this.held.apply(key, () => {
        series.total.inc();
        series.duration.observe(seconds);
        series.last.set(seconds);
      });
    } catch (error) {
      this.logger.warn({ err: error, invocationId: row.id }, 'could not record invocation metrics');
    }
  }

  /**
   * Records how long a claimed invocation waited, on its first claim only: a
   * retry's wait would count its earlier run and backoff too. Never rejects.
   */
  async claimed(row: InvocationRow): Promise<void> {
    if (row.attempts !== 1 || !row.started_at) return;
    try {
      const seconds = Math.max(0, (new Date(row.started_at).getTime() - new Date(row.created_at).getTime()) / 1000);
      const labels = { workspace: await this.workspaceName(row.workspace_id), ...(await this.modelName(row.model_id)) };
      const key = ['wait', row.workspace_id, row.model_id].join('\u0000');
      if (this.madeNow(this.made.queueWait, key)) {
        this.queueWait.zero(labels);
        this.held.hold(key);
      }
      this.held.apply(key, () => this.queueWait.observe(labels, seconds));
    } catch (error) {
      this.logger.warn({ err: error, invocationId: row.id }, 'could not record the queue wait');
    }
  }

  private async seriesOf(row: InvocationRow, model: ModelRow, outcome: 'COMPLETED' | 'ERROR'): Promise<{ key: string; series: RunSeries }> {
    const key = [row.workspace_id, model.model_code, model.version, row.user_id, outcome, row.type].join('\u0000');
    const known = this.series.get(key);
    if (known) return { key, series: known };
    const workspace = await this.workspaceName(row.workspace_id);
    const modelLabels = { workspace, model_code: model.model_code, model_version: model.version };
    const success = String(outcome === 'COMPLETED');
    const totalLabels = { ...modelLabels, user_id: String(row.user_id), status: outcome, type: row.type };
    const durationLabels = { ...modelLabels, type: row.type, success };
    const newTotal = this.madeNow(this.made.total, key);
    const newDuration = this.madeNow(this.made.duration, [row.workspace_id, model.model_code, model.version, row.type, success].join('\u0000'));
    if (newTotal) this.total.inc(totalLabels, 0);
    if (newDuration) this.duration.zero(durationLabels);
    if (newTotal || newDuration) this.held.hold(key);
    const series: RunSeries = { total: this.total.labels(totalLabels), duration: this.duration.labels(durationLabels), last: this.last.labels({ ...modelLabels, success }) };
    this.series.set(key, series);
    return { key, series };
  }

  /** True the first time `key` is seen, which adds it. */
  private madeNow(made: Set<string>, key: string): boolean {
    if (made.has(key)) return false;
    made.add(key);
    return true;
  }

  private async workspaceName(id: number): Promise<string> {
    const known = this.workspaceNames.get(id);
    if (known) return known;
    const name = await this.stores.workspaces.nameById(this.db, id);
    if (name === undefined) throw new Error(`workspace ${id} not found`);
    this.workspaceNames.set(id, name);
    return name;
  }

  private async modelName(id: number): Promise<{ model_code: string; model_version: string }> {
    const known = this.modelNames.get(id);
    if (known) return known;
    const model = await this.stores.models.byId(this.db, id);
    if (!model) throw new Error(`model ${id} not found`);
    const name = { model_code: model.model_code, model_version: model.version };
    this.modelNames.set(id, name);
    return name;
  }
}
