import { median } from './load.js';

// The issue's targets, each a comparison with a baseline of the same run,
// measured in interleaved pairs (baseline, didyma, baseline, didyma, …): the
// figure is the median over the pairs, the noise is their spread, and a
// target missed by less than that spread is "within noise", not missed.

export type Verdict = 'met' | 'missed' | 'within noise';

/** One pair of a target: the same figure of the baseline and of didyma, taken one after the other. */
export interface Pair {
  baseline: number;
  didyma: number;
}

/**
 * How a pair compares: `ratio` didyma ÷ baseline (throughputs, CPU), or
 * `difference` didyma − baseline (latencies over a direct call, ms).
 */
export type Comparison = 'ratio' | 'difference';

export interface TargetSpec {
  /** The issue's number of the target, e.g. "1". */
  id: string;
  /** What is compared, e.g. "POST at saturation, req/s". */
  what: string;
  baselineName: string;
  comparison: Comparison;
  /** The comparison's bound: didyma passes when the median is ≥ it (`higher`) or ≤ it (`lower`). */
  bound: number;
  better: 'higher' | 'lower';
}

export interface TargetResult extends TargetSpec {
  pairs: Pair[];
  /** Median of the pairs' comparisons, and of each side. */
  value: number;
  baseline: number;
  didyma: number;
  /** Half the range of the pairs' comparisons: how far one pair may stray from another on this host. */
  spread: number;
  verdict: Verdict;
}

const compare = (comparison: Comparison, pair: Pair) => (comparison === 'ratio' ? pair.didyma / pair.baseline : pair.didyma - pair.baseline);

/** Half the range of `values` (0 for one value; NaN for none or a non-finite one). */
export function spreadOf(values: number[]): number {
  if (!values.length || values.some((value) => !Number.isFinite(value))) return NaN;
  return (Math.max(...values) - Math.min(...values)) / 2;
}

/**
 * met when the median passes the bound; within noise when it misses it by
 * less than the spread of the pairs; missed otherwise (also when nothing
 * finite was measured).
 */
export function verdictOf(value: number, spread: number, bound: number, better: 'higher' | 'lower'): Verdict {
  if (!Number.isFinite(value)) return 'missed';
  const shortBy = better === 'higher' ? bound - value : value - bound;
  if (shortBy <= 0) return 'met';
  return Number.isFinite(spread) && shortBy < spread ? 'within noise' : 'missed';
}

/** A target judged from its pairs. */
export function judge(spec: TargetSpec, pairs: Pair[]): TargetResult {
  const values = pairs.map((pair) => compare(spec.comparison, pair));
  const value = median(values);
  const spread = spreadOf(values);
  return {
    ...spec,
    pairs,
    value,
    baseline: median(pairs.map((pair) => pair.baseline)),
    didyma: median(pairs.map((pair) => pair.didyma)),
    spread,
    verdict: verdictOf(value, spread, spec.bound, spec.better),
  };
}

/** A target with no pairs to it (peak RSS): met or missed. */
export function judgeAbsolute(spec: Omit<TargetSpec, 'comparison'>, value: number): TargetResult {
  return { ...spec, comparison: 'difference', pairs: [], value, baseline: NaN, didyma: value, spread: 0, verdict: verdictOf(value, 0, spec.bound, spec.better) };
}

const figure = (v: number) => (!Number.isFinite(v) ? 'n/a' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(Math.abs(v) >= 10 ? 1 : 2));
const shown = (t: TargetResult, v: number) => (t.comparison === 'ratio' ? `${v.toFixed(2)} ×` : `${v >= 0 ? '+' : ''}${figure(v)}`);

/** The targets as a markdown table: didyma beside its baseline, the median comparison ± spread, the bound, the verdict. */
export function targetsTable(targets: TargetResult[]): string {
  const rows = targets.map((t) => {
    const comparison = t.pairs.length ? `${shown(t, t.value)} ± ${t.comparison === 'ratio' ? t.spread.toFixed(2) : figure(t.spread)} (${t.pairs.length} pairs)` : '';
    const bound = t.pairs.length ? `${t.better === 'higher' ? '≥' : '≤'} ${shown(t, t.bound)}` : `${t.better === 'higher' ? '≥' : '<'} ${figure(t.bound)}`;
    const verdict = t.verdict === 'missed' ? '**missed**' : t.verdict;
    return `| ${t.id} | ${t.what} | ${figure(t.didyma)} | ${t.pairs.length ? `${figure(t.baseline)} (${t.baselineName})` : t.baselineName} | ${comparison} | ${bound} | ${verdict} |`;
  });
  return ['| # | target | didyma | baseline | median of pairs ± spread | bound | verdict |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}
