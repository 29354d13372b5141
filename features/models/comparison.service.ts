import type { Db } from '../../infra/db/database.js';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { AliasComparisonStore, ComparedVersion, ComparisonScope, FeedbackPropertyRow, FeedbackValueRow, InvocationOutcomeRow, WantedProperty } from './comparison.store.js';
import { aliasKeyOf } from './alias-key.js';
import { meanInterval, wilsonInterval } from './comparison.stats.js';
import { MAX_COMPARED_PAIRS, presentAgreement, toleranceOf } from './shadow-agreement.js';
import { canonicalJson, feedbackMetrics, type FeedbackMetricSpec } from './feedback-metrics.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The window when `since` is not given: the 7 days before `until`. */
export const DEFAULT_WINDOW_DAYS = 7;
/** The longest window: what bounds the rows one comparison reads. */
export const MAX_WINDOW_DAYS = 31;

/** The query of a comparison: its window, and the tolerance between numbers when comparing shadows' outputs. */
export interface ComparisonQuery {
  since?: unknown;
  until?: unknown;
  tolerance?: unknown;
}

/**
 * Compares the versions behind an alias on outcomes: the sessions opened
 * through it grouped by the version each resolved to (`sessions.model_id`,
 * never where the alias points now, so a traffic policy's split shows as it
 * ran). A shadow version's entry carries the agreement of its outputs with
 * its primaries', read from the shadow invocations of the alias's sessions.
 */
export class AliasComparisonService {
  constructor(
    private readonly db: Db,
    private readonly store: AliasComparisonStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async compare(principal: Principal, code: string, alias: string, query: ComparisonQuery) {
    const scope = { ...aliasKeyOf(principal, code, alias), ...this.windowOf(query) };
    const tolerance = toleranceOf(query.tolerance);
    // One snapshot, so the feedback counted and the feedback summarised are the same rows.
    return this.db.transaction(
      async (tx) => {
        if (!(await this.store.everSet(tx, scope))) throw new NotFoundError(`Model ${code} has no alias ${alias}.`);
        const versions = await this.store.versions(tx, scope);
        const wanted = versions.flatMap((v) => feedbackMetrics(v.feedback_schema).map((metric): WantedProperty => ({ model_id: v.model_id, key: metric.name })));
        const [outcomes, counts, properties, values] = [
          await this.store.invocationOutcomes(tx, scope),
          await this.store.feedbackCounts(tx, scope),
          wanted.length ? await this.store.feedbackProperties(tx, scope, wanted) : [],
          wanted.length ? await this.store.feedbackValues(tx, scope, wanted) : [],
        ];
        const agreements = new Map<number, ReturnType<typeof presentAgreement>>();
        for (const v of versions.filter((version) => version.shadow)) {
          agreements.set(v.model_id, presentAgreement(await this.store.shadowPairs(tx, scope, v.model_id, MAX_COMPARED_PAIRS + 1), tolerance));
        }
        return present(scope, versions, { outcomes, counts, properties, values, agreements });
      },
      { isolationLevel: 'repeatable read', readOnly: true },
    );
  }

  /** `[since, until)`: until defaults to now, since to 7 days before; inverted, empty or longer than 31 days is a 400. */
  private windowOf(window: ComparisonQuery): Pick<ComparisonScope, 'since' | 'until'> {
    const until = window.until === undefined ? this.now() : instant(window.until, 'until');
    const since = window.since === undefined ? new Date(until.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS) : instant(window.since, 'since');
    if (since.getTime() >= until.getTime()) throw new InputError('since: must be before until.', [{ field: 'since', message: 'not before until' }]);
    if (until.getTime() - since.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
      throw new InputError(`since: the window is at most ${MAX_WINDOW_DAYS} days; compare longer periods window by window.`, [{ field: 'since', message: `window longer than ${MAX_WINDOW_DAYS} days` }]);
    }
    return { since, until };
  }
}

function instant(value: unknown, field: string): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new InputError(`${field}: not an RFC 3339 date-time.`, [{ field, message: 'not a date-time' }]);
  return date;
}

interface Aggregates {
  outcomes: InvocationOutcomeRow[];
  counts: Array<{ model_id: number; count: number }>;
  properties: FeedbackPropertyRow[];
  values: FeedbackValueRow[];
  /** Per shadow version (by model id): the agreement of its outputs with the primaries'. */
  agreements: Map<number, ReturnType<typeof presentAgreement>>;
}

/** The versions with invocations or feedback in the window, in registration order. */
function present(scope: ComparisonScope, versions: ComparedVersion[], aggregates: Aggregates) {
  const outcomes = new Map(aggregates.outcomes.map((row) => [row.model_id, row]));
  const counts = new Map(aggregates.counts.map((row) => [row.model_id, row.count]));
  return {
    model_code: scope.modelCode,
    alias: scope.alias,
    since: scope.since.toISOString(),
    until: scope.until.toISOString(),
    versions: versions
      .filter((v) => outcomes.has(v.model_id) || counts.has(v.model_id))
      .map((v) => ({
        version: v.version,
        ...presentOutcomes(outcomes.get(v.model_id)),
        feedback: {
          count: counts.get(v.model_id) ?? 0,
          properties: feedbackMetrics(v.feedback_schema).map((metric) => presentMetric(metric, v.model_id, aggregates)),
        },
        agreement: aggregates.agreements.get(v.model_id) ?? null,
      })),
  };
}

function presentOutcomes(row: InvocationOutcomeRow | undefined) {
  const none = { count: 0, p50: null, p99: null };
  if (!row) return { invocations: 0, outcomes: { completed: 0, error: 0, cancelled: 0, pending: 0 }, errors: 0, queue_wait_ms: none, run_time_ms: none };
  return {
    invocations: row.invocations,
    outcomes: { completed: row.completed, error: row.error, cancelled: row.cancelled, pending: row.pending },
    errors: row.error,
    queue_wait_ms: { count: row.queue_count, p50: row.queue_p50, p99: row.queue_p99 },
    run_time_ms: { count: row.run_count, p50: row.run_p50, p99: row.run_p99 },
  };
}

function presentMetric(metric: FeedbackMetricSpec, modelId: number, aggregates: Aggregates) {
  const row = aggregates.properties.find((p) => p.model_id === modelId && p.key === metric.name);
  if (metric.kind === 'boolean') {
    const n = row?.booleans ?? 0;
    return { name: metric.name, kind: metric.kind, count: n, rate: n ? row!.trues / n : null, interval: wilsonInterval(row?.trues ?? 0, n) };
  }
  if (metric.kind === 'number') {
    const n = row?.numbers ?? 0;
    const mean = n ? row!.mean : null;
    return { name: metric.name, kind: metric.kind, count: n, mean, interval: mean === null ? null : meanInterval(mean, row!.sd ?? 0, n) };
  }
  const counted = new Map(aggregates.values.filter((v) => v.model_id === modelId && v.key === metric.name).map((v) => [canonicalJson(v.value), v.count]));
  const values = metric.values.map((value) => ({ value, count: counted.get(canonicalJson(value)) ?? 0 }));
  return { name: metric.name, kind: metric.kind, count: values.reduce((sum, v) => sum + v.count, 0), values };
}
