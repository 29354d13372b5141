import { expect } from 'chai';
import { nextPollMs } from './invocations.js';

describe('bench: waiting for invocations to finish', () => {
  it('polls again in half the time the open invocations would take at the rate just seen', () => {
    // 1,000 finished in 1 s, 4,000 open: 4 s to go, the next count in 2 s.
    expect(nextPollMs({ open: 5000, at: 0 }, { open: 4000, at: 1000 })).to.equal(2000);
    // 100 open at the same rate: 100 ms to go, counted again after 100 ms.
    expect(nextPollMs({ open: 1100, at: 0 }, { open: 100, at: 1000 })).to.equal(100);
    expect(nextPollMs({ open: 1500, at: 0 }, { open: 500, at: 1000 })).to.equal(250);
  });

  it('polls at the shortest pause first, and while nothing finishes', () => {
    expect(nextPollMs(undefined, { open: 5000, at: 0 })).to.equal(100);
    expect(nextPollMs({ open: 5000, at: 0 }, { open: 5000, at: 1000 })).to.equal(100);
    expect(nextPollMs({ open: 10, at: 0 }, { open: 12, at: 1000 })).to.equal(100);
  });

  it('never waits longer than 2 s, however slow the drain', () => {
    expect(nextPollMs({ open: 100_000, at: 0 }, { open: 99_999, at: 1000 })).to.equal(2000);
  });
});
