// The figures of `make bench-scale` (bench/scale.ts) and its verdicts: a list
// page at the largest size within 2× of the smallest (p50), and the last calls
// of a long need_context session within 2× of its first ones.

export interface Timing {
  p50Ms: number;
  p99Ms: number;
  pageBytes: number;
}

export interface ListFigures {
  list: 'models' | 'invocations' | 'feedback';
  rows: number;
  firstPage: Timing;
  /** The last page, through the cursor a client following the Link headers would hold. */
  afterDeep: Timing;
  /** The same page through `offset`, for comparison. */
  offsetDeep: Timing;
  /** COUNT(*) of the list's rows alone (what the kept counters spare each page), and the scan PostgreSQL chose for it. */
  count: { p50Ms: number; plan: string };
}

export interface ContextWindowFigures {
  calls: string;
  /** Claimed → COMPLETED: the context read, the model call, the result's write. */
  runP50Ms: number;
  /** 201 → COMPLETED. */
  totalP50Ms: number;
}

export interface ScaleReport {
  date: string;
  machine: { cpus: number; model: string; memoryGiB: number; loadAverage: number[] };
  settings: { sizes: number[]; samples: number; limit: number; contextCalls: number; contextMaxInvocations: number; database: string };
  lists: ListFigures[];
  context: { calls: number; windows: ContextWindowFigures[] };
  verdicts: Verdict[];
}

export interface Verdict {
  what: string;
  figure: string;
  met: boolean;
}

const MAX_GROWTH = 2;

/** The p-th percentile (nearest rank) of the values, rounded to a hundredth of a millisecond. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[rank]! * 100) / 100;
}

export function scaleVerdicts(report: Pick<ScaleReport, 'lists' | 'context'>): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const list of new Set(report.lists.map((figures) => figures.list))) {
    const sizes = report.lists.filter((figures) => figures.list === list).sort((a, b) => a.rows - b.rows);
    const [smallest, largest] = [sizes[0], sizes.at(-1)];
    if (!smallest || !largest || smallest === largest) continue;
    for (const page of ['firstPage', 'afterDeep'] as const) {
      const growth = largest[page].p50Ms / smallest[page].p50Ms;
      verdicts.push({
        what: `${list} ${page === 'firstPage' ? 'first page' : 'last page by cursor'} p50, ${smallest.rows} → ${largest.rows} rows, within ${MAX_GROWTH}×`,
        figure: `${smallest[page].p50Ms} → ${largest[page].p50Ms} ms (${growth.toFixed(2)}×)`,
        met: growth <= MAX_GROWTH,
      });
    }
  }
  const [first, last] = [report.context.windows[0], report.context.windows.at(-1)];
  if (first && last && first !== last) {
    const growth = last.runP50Ms / first.runP50Ms;
    verdicts.push({
      what: `need_context run p50, calls ${first.calls} → ${last.calls}, within ${MAX_GROWTH}×`,
      figure: `${first.runP50Ms} → ${last.runP50Ms} ms (${growth.toFixed(2)}×)`,
      met: growth <= MAX_GROWTH,
    });
  }
  return verdicts;
}
