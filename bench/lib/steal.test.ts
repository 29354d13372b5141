import { expect } from 'chai';
import { skipBecause } from '../../test/support/skips.js';
import { busySince, parseCpuLine, stealSince, type CpuTicks } from './steal.js';

describe('bench: the VM’s steal time', () => {
  it('reads steal and the total from the machine’s cpu line, not a single CPU’s', () => {
    const stat = 'cpu  100 10 50 800 5 0 5 30 0 0\ncpu0 50 5 25 400 2 0 3 15 0 0\nintr 1 2 3\n';
    expect(parseCpuLine(stat)).to.deep.equal({ steal: 30, idle: 805, total: 1000 });
  });

  it('gives the share stolen between two readings, and NaN when it cannot tell', () => {
    const readings: Array<CpuTicks | undefined> = [
      { steal: 30, idle: 0, total: 1000 },
      { steal: 80, idle: 0, total: 1200 },
    ];
    expect(stealSince(() => readings.shift())()).to.equal(0.25);
    expect(Number.isNaN(stealSince(() => undefined)())).to.equal(true);
    const frozen = [{ steal: 1, idle: 0, total: 10 }, { steal: 1, idle: 0, total: 10 }];
    expect(Number.isNaN(stealSince(() => frozen.shift())())).to.equal(true);
  });

  it('counts the machine’s busy CPU seconds, neither idle, I/O wait nor stolen time', () => {
    // 500 ticks more: 300 idle or waiting, 50 stolen, 150 busy (1.5 s at 100 ticks a second).
    const readings: CpuTicks[] = [
      { steal: 30, idle: 800, total: 1000 },
      { steal: 80, idle: 1100, total: 1500 },
    ];
    expect(busySince(() => readings.shift())()).to.equal(1.5);
    expect(Number.isNaN(busySince(() => undefined)())).to.equal(true);
  });

  it('reads this machine’s /proc/stat', async function () {
    if (process.platform !== 'linux') skipBecause(this, '/proc/stat is Linux only');
    const { readFileSync } = await import('node:fs');
    const ticks = parseCpuLine(readFileSync('/proc/stat', 'utf8'));
    expect(ticks.total).to.be.greaterThan(0);
    expect(ticks.steal).to.be.within(0, ticks.total);
  });
});
