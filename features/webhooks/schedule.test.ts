import { expect } from 'chai';
import { retryDelayMs } from './schedule.js';

describe('the retry schedule of webhook deliveries', () => {
  const schedule = [5_000, 300_000, 1_800_000];

  it('waits the schedule’s delay after each failed attempt, with at most 20% added at random', () => {
    expect(retryDelayMs(schedule, 1, () => 0)).to.equal(5_000);
    expect(retryDelayMs(schedule, 2, () => 0.5)).to.equal(330_000);
    expect(retryDelayMs(schedule, 3, () => 0.999)).to.be.within(1_800_000, 2_160_000);
  });

  it('gives up after the last delay', () => {
    expect(retryDelayMs(schedule, 4)).to.equal(null);
    expect(retryDelayMs([], 1)).to.equal(null);
  });
});
