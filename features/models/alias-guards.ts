import { InputError } from '../../kernel/errors/errors.js';
import { meanInterval, wilsonInterval } from './comparison.stats.js';
import { feedbackMetrics } from './feedback-metrics.js';

/** A floor on a feedback property of a candidate: a boolean's rate of `true`, or a number's mean. */
export type FeedbackGuard = { property: string; min_rate: number } | { property: string; min_mean: number };

/** What a weighted candidate of a policy is held to, over the invocations of its sessions since the policy last changed. */
export interface PolicyGuards {
  min_invocations: number;
  max_error_rate?: number;
  max_p99_run_ms?: number;
  feedback?: FeedbackGuard[];
}

/** Finished invocations a candidate needs before any guard is looked at, when the policy does not say. */
export const DEFAULT_MIN_INVOCATIONS = 100;

/** How one candidate ran since the policy last changed. */
export interface CandidateRecord {
  completed: number;
  errors: number;
  runP99Ms: number | null;
  /** Per feedback property. */
  feedback: Map<string, FeedbackAggregate>;
}

/** A feedback property's booleans counted and their `true`s, its numbers counted, their mean and sample standard deviation. */
export interface FeedbackAggregate {
  booleans: number;
  trues: number;
  numbers: number;
  mean: number | null;
  sd: number | null;
}

/** The guards of a policy body, checked for shape (every rule that needs no database); undefined when absent or null. */
export function guardsInput(given: unknown): PolicyGuards | undefined {
  if (given === undefined || given === null) return undefined;
  if (typeof given !== 'object' || Array.isArray(given)) throw invalid('guards', 'guards: an object.');
  const { min_invocations = DEFAULT_MIN_INVOCATIONS, max_error_rate, max_p99_run_ms, feedback } = given as Record<string, unknown>;
  if (typeof min_invocations !== 'number' || !Number.isInteger(min_invocations) || min_invocations < 1) throw invalid('guards.min_invocations', 'guards.min_invocations: an integer of at least 1.');
  const guards: PolicyGuards = { min_invocations };
  if (max_error_rate !== undefined) guards.max_error_rate = rate(max_error_rate, 'guards.max_error_rate');
  if (max_p99_run_ms !== undefined) {
    if (typeof max_p99_run_ms !== 'number' || !(max_p99_run_ms > 0)) throw invalid('guards.max_p99_run_ms', 'guards.max_p99_run_ms: a number of milliseconds above 0.');
    guards.max_p99_run_ms = max_p99_run_ms;
  }
  if (feedback !== undefined) {
    if (!Array.isArray(feedback)) throw invalid('guards.feedback', 'guards.feedback: a list of {property, min_rate} or {property, min_mean}.');
    guards.feedback = feedback.map((entry: unknown, i) => feedbackGuardOf(entry, `guards.feedback[${i}]`));
  }
  return guards;
}

function feedbackGuardOf(entry: unknown, field: string): FeedbackGuard {
  const { property, min_rate, min_mean } = (entry ?? {}) as Record<string, unknown>;
  if (typeof property !== 'string' || !property) throw invalid(`${field}.property`, `${field}.property: required, a property of the feedback schema.`);
  if ((min_rate === undefined) === (min_mean === undefined)) throw invalid(field, `${field}: exactly one of min_rate (a boolean property) and min_mean (a number).`);
  if (min_rate !== undefined) return { property, min_rate: rate(min_rate, `${field}.min_rate`) };
  if (typeof min_mean !== 'number' || !Number.isFinite(min_mean)) throw invalid(`${field}.min_mean`, `${field}.min_mean: a number.`);
  return { property, min_mean };
}

/**
 * Checks each feedback guard against a candidate version's feedback schema:
 * `min_rate` needs a boolean property of it, `min_mean` a number (or integer);
 * anything else is a 400 naming the guard's property.
 */
export function checkFeedbackGuards(guards: PolicyGuards | undefined, version: string, schema: Record<string, unknown> | null): void {
  const metrics = feedbackMetrics(schema);
  (guards?.feedback ?? []).forEach((guard, i) => {
    const kind = 'min_rate' in guard ? 'boolean' : 'number';
    if (!metrics.some((m) => m.name === guard.property && m.kind === kind)) {
      const field = `guards.feedback[${i}].property`;
      throw invalid(field, `${field}: ${guard.property} is not a ${kind} property of the feedback schema of version ${version}.`);
    }
  });
}

/**
 * Why the candidate trips its guards, or null while it is within them (or has
 * fewer than `min_invocations` finished invocations). Rates and means trip on
 * their 95% interval, so noise alone does not: the error rate when even its
 * Wilson lower bound is above the maximum, a feedback rate when its Wilson
 * upper bound is below the minimum, a mean when its t interval's upper bound is.
 */
export function trippedGuard(guards: PolicyGuards, record: CandidateRecord): string | null {
  const finished = record.completed + record.errors;
  if (finished < guards.min_invocations) return null;
  if (guards.max_error_rate !== undefined) {
    const interval = wilsonInterval(record.errors, finished)!;
    if (interval.low > guards.max_error_rate) return `error rate ${record.errors}/${finished}, 95% interval ${round(interval.low)}..${round(interval.high)}, above max_error_rate ${guards.max_error_rate}`;
  }
  if (guards.max_p99_run_ms !== undefined && record.runP99Ms !== null && record.runP99Ms > guards.max_p99_run_ms) {
    return `p99 run time ${round(record.runP99Ms)} ms above max_p99_run_ms ${guards.max_p99_run_ms}`;
  }
  for (const guard of guards.feedback ?? []) {
    const reason = feedbackTrip(guard, record.feedback.get(guard.property));
    if (reason) return reason;
  }
  return null;
}

function feedbackTrip(guard: FeedbackGuard, seen: FeedbackAggregate | undefined): string | null {
  if (!seen) return null;
  if ('min_rate' in guard) {
    const interval = wilsonInterval(seen.trues, seen.booleans);
    return interval && interval.high < guard.min_rate ? `feedback ${guard.property} rate ${seen.trues}/${seen.booleans}, 95% interval ${round(interval.low)}..${round(interval.high)}, below min_rate ${guard.min_rate}` : null;
  }
  const interval = seen.mean === null ? null : meanInterval(seen.mean, seen.sd ?? 0, seen.numbers);
  return interval && interval.high < guard.min_mean ? `feedback ${guard.property} mean ${round(seen.mean!)} of ${seen.numbers}, 95% interval ${round(interval.low)}..${round(interval.high)}, below min_mean ${guard.min_mean}` : null;
}

function rate(value: unknown, field: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw invalid(field, `${field}: a rate from 0 to 1.`);
  return value;
}

const round = (value: number) => Math.round(value * 1000) / 1000;

const invalid = (field: string, message: string) => new InputError(message, [{ field, message }]);
