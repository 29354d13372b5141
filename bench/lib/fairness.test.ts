import { expect } from 'chai';
import type { Brief } from './load.js';
import { cpuPerCompletion, floodVerdicts, lowRate, quietBoundMs, waitsOf, type FairnessReport, type FloodRow } from './fairness.js';
import { fairnessRows } from './report.js';

const brief = (rps: number): Brief => ({ rps, p50: 1, p99: 2, requests: 100, statuses: { 201: 100 }, errors: 0, timeouts: 0 });
const report = (floods: FloodRow[]): FairnessReport => ({
  invocations: 10_000,
  quietRate: 4,
  quietSec: 10,
  modelMs: 10,
  modelLabel: 'demo model server, 10 ms model',
  baseline: brief(10_000),
  single: { post: brief(4000), drain: { rps: 700, seconds: 14.3, completed: 10_000, failed: 0 } },
  idle: { count: 40, p50: 3, p99: 12, load: brief(4) },
  floods,
});
const flood = (workspaces: number, postRps: number, drainRps: number, quietP99: number): FloodRow => ({
  workspaces,
  post: brief(postRps),
  drain: { rps: drainRps, seconds: 15, completed: 10_040, failed: 0 },
  quiet: { count: 40, p50: 5, p99: quietP99, load: brief(4) },
});

describe('bench fairness: percentiles and targets', () => {
  it('keeps the quiet workspace at half its fair share of the drain at most', () => {
    expect(lowRate(4, 236, 100)).to.equal(1.1);
    expect(lowRate(4, 2000, 10)).to.equal(4);
    expect(lowRate(4, 50, 100)).to.equal(0.5);
  });

  it('takes p50 and p99 of unsorted waits as the nearest rank', () => {
    const values = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 … 1
    expect(waitsOf(values)).to.deep.equal({ count: 200, p50: 100, p99: 198 });
    expect(waitsOf([7])).to.deep.equal({ count: 1, p50: 7, p99: 7 });
    expect(Number.isNaN(waitsOf([]).p99)).to.equal(true);
  });

  it('bounds the quiet p99 by its idle p99, one model call and 250 ms', () => {
    expect(quietBoundMs(report([]))).to.equal(12 + 10 + 250);
    const r = report([]);
    expect(floodVerdicts(r, flood(10, 2500, 665, 272))).to.deep.include({ post: true, drain: true, quiet: true });
    expect(floodVerdicts(r, flood(10, 2500, 665, 272.1)).quiet).to.equal(false);
  });

  it('sets the drain against the single queue and the POSTs against (1)', () => {
    const v = floodVerdicts(report([]), flood(100, 2400, 660, 20));
    expect(v.drainRatio).to.be.closeTo(660 / 700, 1e-9);
    expect(v.drain).to.equal(false); // 94%
    expect(v.postRatio).to.equal(0.24);
    expect(v.post).to.equal(false);
  });

  it('sets a flood with a single queue of its own against that one, not the first', () => {
    const paired = { ...flood(100, 2400, 660, 20), single: { rps: 650, seconds: 15.4, completed: 10_000, failed: 0 } };
    const v = floodVerdicts(report([]), paired);
    expect(v.drainRatio).to.be.closeTo(660 / 650, 1e-9);
    expect(v.drain).to.equal(true);
    expect(fairnessRows(report([paired]))[3]!.slice(4)).to.deep.equal(['≥ 95% of the single queue drained just before it (650/s): 102%', 'met']);
  });

  it("states each drain's CPU per invocation beside its single queue's", () => {
    const cpu = cpuPerCompletion({ executor: 12, database: 30 }, 10_000);
    expect(cpu).to.deep.equal({ executorMs: 1.2, databaseMs: 3 });
    const single = { rps: 650, seconds: 15.4, completed: 10_000, failed: 0, cpu: { executorMs: 1.1, databaseMs: 2.5 } };
    const row = fairnessRows(report([{ ...flood(100, 2400, 660, 20), drain: { rps: 660, seconds: 15, completed: 10_000, failed: 0, cpu }, single }]))[3]![1];
    expect(row).to.match(/; CPU ms per invocation, executor \/ PostgreSQL: 1\.20 \/ 3\.00 \(single queue 1\.10 \/ 2\.50\)$/);
  });

  it('gives each flood three rows after the single queue and the quiet workspace alone', () => {
    const rows = fairnessRows(report([flood(1, 3000, 700, 20), flood(100, 3000, 600, 900)]));
    expect(rows).to.have.length(2 + 2 * 3);
    expect(rows[4]).to.deep.equal(['7', "1 workspace flooding: the quiet workspace's queue wait, 4/s for 10 s (40 invocations)", '4', '5.0 / 20.0', 'p99 ≤ alone + one model call + 250 ms = 272.0 ms', 'met']);
    expect(rows[6]![5]).to.equal('**missed**'); // 600 of 700: 86%
    expect(rows[7]![5]).to.equal('**missed**');
  });
});
