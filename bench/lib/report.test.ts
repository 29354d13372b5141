import { expect } from 'chai';
import type { LoadResult } from './load.js';
import { drainCpu, floorUnitsText, inFloorUnits, gaugeText, judged, oneCallRow, placementText, roundsText, segmentsText, stealText, totals, tracingRows, type BenchReport } from './report.js';
import type { TracingCostReport } from './tracing-cost.js';
import type { TargetResult, Verdict } from './verdict.js';

const segment = (rps: number, ratio: number, seconds = 6) => ({ from: '2026-11-22T00:00:00.000Z', to: new Date(Date.parse('2026-11-22T00:00:00Z') + seconds * 1000).toISOString(), completed: rps * seconds, rps, maxBefore: 0, maxAfter: 0, ratio });
const drain = (extra: Partial<BenchReport['executor']> = {}): BenchReport['executor'] => ({
  completed: 1000,
  failed: 0,
  rps: 600,
  ratio: 0.8,
  backlog: 1000,
  warmUpSec: 3,
  segments: [segment(600, 0.8)],
  cpuUsPerInvocation: NaN,
  modelCpuUsPerCall: NaN,
  ...extra,
});
const modelMax = (cpuUsPerRequest?: number) => ({ rps: 800, cpuUsPerRequest }) as LoadResult & { cpuUsPerRequest?: number };

describe('bench report: the executor drain row', () => {
  it('says how the drain was taken: its segments after the warm-up, each with its rate and ratio', () => {
    expect(segmentsText(drain({ segments: [segment(612.4, 0.812), segment(590, 0.776)] }))).to.equal(
      ': median of 2 segments of 6 s after its first 3 s, each against the mean of the maxima just before and after it; in order 612 (81%), 590 (78%)',
    );
    expect(segmentsText(drain({ segments: [] }))).to.equal(': no segment, the backlog was too small for one after its first 3 s');
  });

  it('gives the executor’s CPU per invocation and the model server’s per call against its maximum', () => {
    expect(drainCpu(drain({ cpuUsPerInvocation: 812.4, modelCpuUsPerCall: 1490 }), modelMax(1302))).to.equal('executor 812; model server 1,490 per call (1,302 at its maximum)');
    expect(drainCpu(drain({ cpuUsPerInvocation: 812.4, modelCpuUsPerCall: 1490 }), modelMax())).to.equal('executor 812; model server 1,490 per call');
    expect(drainCpu(drain(), modelMax(1302))).to.equal(''); // no segment: nothing measured
  });
});

describe('bench report: the footer', () => {
  it('says where the model server and the executor ran', () => {
    expect(placementText({ mode: 'split', modelCpus: '1', executorCpus: '0' })).to.equal(
      ' the model server bound to CPU 1 and the executor to CPU 0, every other process where the scheduler put it (BENCH_PLACEMENT=split);',
    );
    expect(placementText({ mode: 'split', modelCpus: '1', executorCpus: '0', modelNice: -10 })).to.equal(
      ' the model server bound to CPU 1 at nice -10 and the executor to CPU 0, every other process where the scheduler put it (BENCH_PLACEMENT=split);',
    );
    expect(placementText({ mode: 'shared', modelCpus: '', executorCpus: '' })).to.equal(' every process where the scheduler put it (BENCH_PLACEMENT=shared);');
    expect(placementText(undefined)).to.equal(''); // a run from before placement
  });

  it('gives the hypervisor’s share of the CPU during each figure', () => {
    expect(stealText({ post: 0.012, get: 0.3, endToEnd: NaN, executor: 0 })).to.equal(
      " CPU time taken by the hypervisor (steal) during (2) 1.2%, (3) 30.0%, (4)'s latency run n/a, (5) 0.0%;",
    );
    expect(stealText(undefined)).to.equal(''); // a run from before steal was measured
  });
});

describe('bench report: the end-to-end latency rows', () => {
  const pair = (e2e: [number, number], direct: [number, number]) => ({
    endToEnd: { p50: e2e[0], p99: e2e[1], count: 1500 },
    direct: { p50: direct[0], p99: direct[1] },
    over: { p50: e2e[0] - direct[0], p99: e2e[1] - direct[1] },
  });

  it('lists each round with its difference from the direct runs around it', () => {
    expect(roundsText([pair([8, 40], [2, 5]), pair([9.25, 61], [2.5, 6])])).to.equal(
      'median over the rounds, each against the lower p50 and the lower p99 of the direct runs around it; in order 8.0 / 40.0 (+6.0 / +35.0 ms), 9.3 / 61.0 (+6.8 / +55.0 ms)',
    );
  });

  it('adds up the statuses, errors and timeouts of several load runs', () => {
    const run = (statuses: Record<string, number>, errors = 0, timeouts = 0) => ({ statuses, errors, timeouts });
    expect(totals([run({ 201: 10, 503: 1 }, 1), run({ 201: 5 }, 0, 2)])).to.deep.equal({ statuses: { 201: 15, 503: 1 }, errors: 1, timeouts: 2 });
  });
});

describe('bench report: a prediction in one call', () => {
  const brief = (statuses: Record<string, number>, p50: number, p99: number) => ({ rps: 100, p50, p99, requests: 0, statuses, errors: 0, timeouts: 0 });
  const round = (p50: number, p99: number, direct: [number, number]) => ({
    endToEnd: { p50, p99, count: 1000 },
    direct: { p50: direct[0], p99: direct[1] },
    over: { p50: p50 - direct[0], p99: p99 - direct[1] },
  });

  it('counts the calls answered with their result apart from those answered before it, and sets the rounds against direct calls', () => {
    const cells = oneCallRow(
      {
        rate: 120,
        waitSec: 10,
        loads: [brief({ 200: 1199, 201: 1 }, 9, 30), brief({ 200: 1200 }, 8, 20), brief({ 200: 1199, 503: 1 }, 10, 40)],
        pairs: [round(9, 30, [1, 4]), round(8, 20, [1, 4]), round(10, 40, [2, 5])],
        directs: [brief({ 200: 1200 }, 1, 4)],
        over: { p50: 8, p99: 26 },
      },
      'demo',
    );
    expect(cells[1]).to.contain('`Prefer: wait=10`').and.contain('120/s: 3 rounds');
    expect(cells[2]).to.equal('3,598 of 3,600 with their result, 1 answered before their result (503: 1)');
    expect(cells[3]).to.equal('9.0 / 30.0');
    expect(cells[4]).to.match(/^\+8\.0 \/ \+26\.0 ms over a direct call: median over the rounds/);
  });
});

describe('bench report: the CPU gauge in the footer', () => {
  it('gives the gauge at each point it was taken, in order', () => {
    expect(gaugeText({ start: 331.2, post: 340, get: 1210.6, executor: 350, endToEnd: 345, end: 338 })).to.equal(
      " CPU gauge (ms for a fixed loop in the bench's process, lower is faster) at the start 331, before (2) 340, (3) 1,211, (5) 350, (4)'s latency 345, at the end 338;",
    );
    expect(gaugeText({ start: 331 })).to.equal(" CPU gauge (ms for a fixed loop in the bench's process, lower is faster) at the start 331;"); // a run that failed early
    expect(gaugeText(undefined)).to.equal(''); // a run from before the gauge
  });
});

describe('bench report: verdicts in a disturbed phase', () => {
  it('marks a verdict disturbed when the hypervisor took more than 5% of the CPU during its figure', () => {
    expect(judged(true, 0.25)).to.equal('met (disturbed: steal 25%)');
    expect(judged(false, 0.9)).to.equal('**missed** (disturbed: steal 90%)');
    expect(judged(false, 0.05)).to.equal('**missed**'); // at the bound: not disturbed
    expect(judged(true, 0.001)).to.equal('met');
    expect(judged(true, NaN)).to.equal('met'); // unreadable (not Linux)
    expect(judged(true, undefined)).to.equal('met'); // a run from before steal was measured
  });
});

describe('bench report: an overhead in floor units', () => {
  it('divides p50 by the floor’s p50 and p99 by its p99', () => {
    const floors = { postgres: { rps: 39_000, p50: 0.5, p99: 2.5 }, broker: { confirm: { p50: 0.3, p99: 1 }, delivery: { p50: 0.25, p99: 1.25 } } };
    const units = inFloorUnits({ p50: 5, p99: 25 }, floors);
    expect(units).to.deep.equal({ postgres: { p50: 10, p99: 10 }, broker: { p50: 20, p99: 20 } });
    expect(floorUnitsText(units)).to.equal(" (10.0 / 10.0 PostgreSQL round trips, 20.0 / 20.0 broker hops: (0)'s p50 / p99)");
  });
});

describe('bench report: the tracing rows', () => {
  const cpu = (server: number, database: number) => ({ server, database, requests: 1000 });
  const target = (value: number, spread: number, bound: number, verdict: Verdict): TargetResult => ({
    id: '5',
    what: '',
    baselineName: 'untraced',
    comparison: 'ratio',
    bound,
    better: 'lower',
    pairs: [{ baseline: 1, didyma: value }],
    value,
    spread,
    baseline: 1,
    didyma: value,
    verdict,
  });
  const report: TracingCostReport = {
    rate: 100,
    chartRatio: 0.1,
    rounds: [{ untraced: cpu(3000, 1600), chart: cpu(3100, 1600), all: cpu(4200, 1700) }],
    medians: { untraced: cpu(3000, 1600), chart: cpu(3100, 1600), all: cpu(4200, 1700) },
    spansPerPost: { chart: 0.21, all: 2.05 },
    usPerSpan: 634,
    targets: { chart: target(1.02, 0.03, 1.05, 'met'), all: target(1.28, 0.04, 1.15, 'missed') },
  };

  it('gives seven cells a row, the CPU per POST of server and PostgreSQL on each side, and each traced side judged', () => {
    const rows = tracingRows(report);
    expect(rows.map((cells) => cells.length)).to.deep.equal([7, 7, 7]);
    expect(rows[0]![4]).to.equal('3,000 + PostgreSQL 1,600');
    expect(rows[1]![1]).to.include('sampling as the chart ships (parentbased_traceidratio 0.1)').and.include('0.21 spans exported per POST');
    expect(rows[1]!.slice(5)).to.deep.equal(['≤ +5%: +2% ± 3% (median of 1 rounds ± half their range)', 'met']);
    expect(rows[2]![1]).to.include('2.05 spans exported per POST, 634 µs of server CPU per exported span');
    expect(rows[2]!.slice(5)).to.deep.equal(['≤ +15%: +28% ± 4% (median of 1 rounds ± half their range)', '**missed**']);
  });
});
