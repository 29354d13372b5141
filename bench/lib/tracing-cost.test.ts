import { expect } from 'chai';
import { measureTracingCost, orderOf, type SideRun, type TracedSide, type TracingSide } from './tracing-cost.js';

const run = (server: number, database: number, requests = 1000): SideRun => ({ server, database, requests });

describe('bench (9): the cost of tracing', () => {
  it('rotates the order of the sides each round and judges each traced side against its round\'s untraced run', async () => {
    const order: TracingSide[] = [];
    // Server + PostgreSQL per round: untraced 3000, 3300, 2900; the chart's sampler +2%, +4%, +1%; every request +10%, +20%, +12%.
    const runs: Record<TracingSide, SideRun[]> = {
      untraced: [run(2000, 1000), run(2200, 1100), run(1900, 1000)],
      chart: [run(2060, 1000), run(2332, 1100), run(1929, 1000)],
      all: [run(2270, 1030), run(2860, 1100), run(2218, 1030)],
    };
    const spans: Record<TracedSide, number[]> = { chart: [7, 7 + 300], all: [40, 40 + 6000] };
    const report = await measureTracingCost(
      {
        run: async (side) => (order.push(side), runs[side].shift()!),
        exported: async (side) => spans[side].shift()!,
      },
      { rounds: 3, rate: 100, chartRatio: 0.05 },
    );
    expect(order).to.deep.equal(['untraced', 'chart', 'all', 'chart', 'all', 'untraced', 'all', 'untraced', 'chart']);
    expect(orderOf(3)).to.deep.equal(orderOf(0));
    expect(report.medians.untraced).to.deep.equal({ server: 2000, database: 1000 });
    expect(report.medians.all).to.deep.equal({ server: 2270, database: 1030 });
    // Spans counted over the rounds only (3000 POSTs a side).
    expect(report.spansPerPost).to.deep.equal({ chart: 0.1, all: 2 });
    // Every request recorded over untraced, the server alone (PostgreSQL's noise left out), per span: 270, 660 and 318 µs a POST over 2 spans a POST.
    expect(report.usPerSpan).to.be.closeTo(159, 1e-9);

    const { chart, all } = report.targets;
    expect(chart.value).to.be.closeTo(1.02, 1e-9);
    expect(chart.verdict).to.equal('met');
    expect(all.value).to.be.closeTo(1.12, 1e-9);
    expect(all.spread).to.be.closeTo(0.05, 1e-9);
    expect(all.verdict).to.equal('met');
    expect(chart.what).to.include("the chart's sampler (0.05 of the traces)");
  });

  it('calls a miss smaller than the spread of the rounds within noise', async () => {
    const sides: Record<TracingSide, SideRun[]> = {
      untraced: [run(1000, 0), run(1000, 0), run(1000, 0)],
      chart: [run(1000, 0), run(1080, 0), run(1200, 0)],
      all: [run(1300, 0), run(1300, 0), run(1300, 0)],
    };
    const report = await measureTracingCost({ run: async (side) => sides[side].shift()!, exported: async () => 0 }, { rounds: 3, rate: 100, chartRatio: 0.05 });
    expect(report.targets.chart.verdict).to.equal('within noise');
    expect(report.targets.all.verdict).to.equal('missed');
  });
});
