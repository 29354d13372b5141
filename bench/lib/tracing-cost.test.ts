import { expect } from 'chai';
import { measureTracingCost, type PostCpu } from './tracing-cost.js';
import type { Brief } from './load.js';

const brief = (rps: number) => ({ rps }) as Brief;
const cpu = (server: number, database: number): PostCpu => ({ server, database });

describe('bench (9): the cost of tracing', () => {
  it('alternates which side goes first and compares the medians', async () => {
    const order: string[] = [];
    const untraced = [1000, 900, 1100];
    const traced = [960, 870, 1050];
    const untracedCpu = [cpu(1000, 500), cpu(1200, 400), cpu(900, 600)];
    const tracedCpu = [cpu(1050, 500), cpu(1300, 450), cpu(950, 700)];
    const report = await measureTracingCost(
      {
        untraced: async () => (order.push('off'), brief(untraced.shift()!)),
        traced: async () => (order.push('on'), brief(traced.shift()!)),
        untracedCpu: async () => (order.push('off cpu'), untracedCpu.shift()!),
        tracedCpu: async () => (order.push('on cpu'), tracedCpu.shift()!),
      },
      3,
      100,
      { label: 'every request', env: { OTEL_TRACES_SAMPLER: 'always_on' } },
    );
    expect(order).to.deep.equal(['off', 'off cpu', 'on', 'on cpu', 'on', 'on cpu', 'off', 'off cpu', 'off', 'off cpu', 'on', 'on cpu']);
    expect(report.sampling).to.equal('every request');
    expect(report.untracedRps).to.equal(1000);
    expect(report.tracedRps).to.equal(960);
    expect(report.cost).to.be.closeTo(0.04, 1e-9);
    // Each part's median on its own: server 1000 and 1050, PostgreSQL 500 and 500.
    expect(report.untracedCpu).to.deep.equal(cpu(1000, 500));
    expect(report.tracedCpu).to.deep.equal(cpu(1050, 500));
    // Round by round, server and PostgreSQL together: 1550 / 1500, 1750 / 1600, 1650 / 1500; the median of those.
    expect(report.cpuCost).to.be.closeTo(1750 / 1600 - 1, 1e-9);
    expect(report.cpuRate).to.equal(100);
  });
});
