import { expect } from 'chai';
import { skipBecause } from '../../test/support/skips.js';
import { parseCpuLine, stealSince, type CpuTicks } from './steal.js';

describe('bench: the VM’s steal time', () => {
  it('reads steal and the total from the machine’s cpu line, not a single CPU’s', () => {
    const stat = 'cpu  100 10 50 800 5 0 5 30 0 0\ncpu0 50 5 25 400 2 0 3 15 0 0\nintr 1 2 3\n';
    expect(parseCpuLine(stat)).to.deep.equal({ steal: 30, total: 1000 });
  });

  it('gives the share stolen between two readings, and NaN when it cannot tell', () => {
    const readings: Array<CpuTicks | undefined> = [
      { steal: 30, total: 1000 },
      { steal: 80, total: 1200 },
    ];
    expect(stealSince(() => readings.shift())()).to.equal(0.25);
    expect(Number.isNaN(stealSince(() => undefined)())).to.equal(true);
    const frozen = [{ steal: 1, total: 10 }, { steal: 1, total: 10 }];
    expect(Number.isNaN(stealSince(() => frozen.shift())())).to.equal(true);
  });

  it('reads this machine’s /proc/stat', async function () {
    if (process.platform !== 'linux') skipBecause(this, '/proc/stat is Linux only');
    const { readFileSync } = await import('node:fs');
    const ticks = parseCpuLine(readFileSync('/proc/stat', 'utf8'));
    expect(ticks.total).to.be.greaterThan(0);
    expect(ticks.steal).to.be.within(0, ticks.total);
  });
});
