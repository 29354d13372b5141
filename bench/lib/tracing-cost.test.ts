import { expect } from 'chai';
import { measureTracingCost } from './tracing-cost.js';
import type { Brief } from './load.js';

const brief = (rps: number) => ({ rps }) as Brief;

describe('bench (9): the cost of tracing', () => {
  it('alternates which side goes first and compares the medians', async () => {
    const order: string[] = [];
    const untraced = [1000, 900, 1100];
    const traced = [960, 870, 1050];
    const report = await measureTracingCost(
      {
        untraced: async () => (order.push('off'), brief(untraced.shift()!)),
        traced: async () => (order.push('on'), brief(traced.shift()!)),
      },
      3,
    );
    expect(order).to.deep.equal(['off', 'on', 'on', 'off', 'off', 'on']);
    expect(report.untracedRps).to.equal(1000);
    expect(report.tracedRps).to.equal(960);
    expect(report.cost).to.be.closeTo(0.04, 1e-9);
  });
});
