import { expect } from 'chai';
import { cpuGaugeMs } from './gauge.js';

describe('bench: the CPU gauge', () => {
  it('gives the loop’s time in ms, a finite positive figure', () => {
    const ms = cpuGaugeMs(100_000, 2);
    expect(ms).to.be.a('number');
    expect(Number.isFinite(ms) && ms > 0).to.equal(true);
  });
});
