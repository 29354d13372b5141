import { expect } from 'chai';
import { keptUp, sustainedCapacity, type RateRun } from './capacity.js';

/** A path that completes min(rate, capacity) per second and answers every POST 201. */
function pathWithCapacity(capacity: number, tried: number[]) {
  return async (rate: number): Promise<RateRun> => {
    tried.push(rate);
    const rps = Math.min(rate, capacity);
    return {
      load: { rps: rate, p50: 1, p99: 2, requests: rate * 10, statuses: { 201: rate * 10 }, errors: 0, timeouts: 0 },
      throughput: { completed: rps * 10, failed: 0, seconds: 10, rps },
    };
  };
}

describe('bench: sustained end-to-end capacity', () => {
  it('is the upper bound when the path keeps up with it', async () => {
    const tried: number[] = [];
    const result = await sustainedCapacity(400, 3, pathWithCapacity(400, tried));
    expect(tried).to.deep.equal([400]);
    expect(result.rate).to.equal(400);
  });

  it('bisects between a quarter of the upper bound and the bound when the bound is not kept up with', async () => {
    const tried: number[] = [];
    const result = await sustainedCapacity(400, 3, pathWithCapacity(230, tried));
    expect(tried).to.deep.equal([400, 100, 250, 175, 213]);
    expect(result.rate).to.equal(213);
    expect(result.steps.map((step) => step.kept)).to.deep.equal([false, true, false, true, true]);
  });

  it('halves below the first guess when the path keeps up with less than a quarter of the bound', async () => {
    const tried: number[] = [];
    const result = await sustainedCapacity(400, 1, pathWithCapacity(60, tried));
    expect(tried).to.deep.equal([400, 100, 50, 75]);
    expect(result.rate).to.equal(50);
  });

  it('reports 0 when no rate was kept up with', async () => {
    const result = await sustainedCapacity(400, 2, pathWithCapacity(1, []));
    expect(result.rate).to.equal(0);
    expect(result.steps).to.have.length(5);
  });

  it('does not count a rate as kept when a POST was refused or an invocation failed', () => {
    const run = (statuses: Record<string, number>, failed: number): RateRun => ({
      load: { rps: 100, p50: 1, p99: 2, requests: 1000, statuses, errors: 0, timeouts: 0 },
      throughput: { completed: 1000, failed, seconds: 10, rps: 100 },
    });
    expect(keptUp(100, run({ 201: 1000 }, 0))).to.equal(true);
    expect(keptUp(100, run({ 201: 990, 503: 10 }, 0))).to.equal(false);
    expect(keptUp(100, run({ 201: 1000 }, 1))).to.equal(false);
    expect(keptUp(100, { ...run({ 201: 1000 }, 0), throughput: { completed: 900, failed: 0, seconds: 10, rps: 90 } })).to.equal(false);
  });
});
