import { InputError } from '../../kernel/errors/errors.js';
import type { MetricDefinition } from './catalog.js';
import { parseDuration, parseTime } from './time.js';

/** Prometheus refuses range queries of more points per series than this. */
export const MAX_POINTS = 11_000;

export interface TimeRange {
  /** UNIX seconds. */
  start: number;
  end: number;
  /** Seconds. */
  step: number;
}

export interface MetricRequest {
  /** Catalog parameters given, as [label, value] in catalog order; `workspace` is never among them. */
  labels: Array<[string, string]>;
  /** The `workspace` the caller named, if any: who may name which is the service's decision. */
  workspace: string | undefined;
  /** Absent: an instant query. */
  range: TimeRange | undefined;
}

const RANGE_KEYS = ['start', 'end', 'step'] as const;

/**
 * Checks the query string of `GET /api/metric/{name}` against the metric's
 * definition: every parameter known and given once, the required ones
 * present, and either none or all of start, end and step.
 */
export function parseMetricRequest(metric: MetricDefinition, query: Record<string, unknown>): MetricRequest {
  const allowed = [...metric.required_params, ...metric.optional_params];
  const values = new Map<string, string>();
  for (const [key, raw] of Object.entries(query)) {
    if (!allowed.includes(key) && key !== 'workspace' && !(RANGE_KEYS as readonly string[]).includes(key)) {
      throw new InputError(`Unknown parameter ${key} for metric ${metric.name}; it accepts ${[...allowed, 'workspace', ...RANGE_KEYS].join(', ')}.`, [{ field: key, message: 'unknown parameter' }]);
    }
    values.set(key, single(key, raw));
  }
  const missing = metric.required_params.filter((name) => !values.has(name));
  if (missing.length) throw new InputError(`Metric ${metric.name} needs ${missing.join(', ')}.`, missing.map((field) => ({ field, message: 'required' })));
  const labels = allowed.filter((name) => name !== 'workspace' && values.has(name)).map((name): [string, string] => [name, values.get(name)!]);
  return { labels, workspace: values.get('workspace'), range: rangeOf(values) };
}

function single(key: string, raw: unknown): string {
  if (typeof raw !== 'string') throw new InputError(`Give ${key} once, as a single value.`, [{ field: key, message: 'expected one value' }]);
  if (raw === '') throw new InputError(`${key} must not be empty.`, [{ field: key, message: 'empty' }]);
  return raw;
}

function rangeOf(values: Map<string, string>): TimeRange | undefined {
  const given = RANGE_KEYS.filter((key) => values.has(key));
  if (given.length === 0) return undefined;
  if (given.length < RANGE_KEYS.length) {
    const missing = RANGE_KEYS.filter((key) => !values.has(key));
    throw new InputError(`A range query needs all of start, end and step; ${missing.join(' and ')} missing. Give none of them for the latest value.`, missing.map((field) => ({ field, message: 'required with ' + given.join(', ') })));
  }
  const start = timeOf('start', values.get('start')!);
  const end = timeOf('end', values.get('end')!);
  const step = parseDuration(values.get('step')!);
  if (step === null || step <= 0) throw new InputError('step must be a positive duration such as 15s, 5m, 1h or a number of seconds.', [{ field: 'step', message: 'invalid duration' }]);
  if (end < start) throw new InputError('end must not be before start.', [{ field: 'end', message: 'before start' }]);
  const points = Math.floor((end - start) / step) + 1;
  if (points > MAX_POINTS) throw new InputError(`The range has ${points} points per series; at most ${MAX_POINTS}: raise step or shorten the range.`, [{ field: 'step', message: 'too many points' }]);
  return { start, end, step };
}

function timeOf(field: 'start' | 'end', text: string): number {
  const seconds = parseTime(text);
  if (seconds === null) throw new InputError(`${field} must be a UNIX timestamp or YYYY-MM-DDTHH:MM:SS.`, [{ field, message: 'invalid time' }]);
  return seconds;
}
