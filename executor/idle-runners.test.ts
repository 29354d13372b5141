import { expect } from 'chai';
import { IdleRunners } from './idle-runners.js';

describe('IdleRunners', () => {
  it('wakes at most as many runners as asked, the longest idle first, and says how many', async () => {
    const idle = new IdleRunners(60_000);
    const woken: string[] = [];
    for (const name of ['a', 'b', 'c']) void idle.wait().then((reason) => woken.push(`${name}:${reason}`));
    expect(idle.wake(2)).to.equal(2);
    expect(idle.wake(5)).to.equal(1);
    expect(idle.wake(1)).to.equal(0);
    await Promise.resolve();
    expect(woken).to.deep.equal(['a:ring', 'b:ring', 'c:ring']);
  });

  it('wakes one runner per poll while some are idle', async () => {
    const idle = new IdleRunners(20);
    const woken: string[] = [];
    const waits = ['a', 'b'].map((name) => idle.wait().then((reason) => woken.push(`${name}:${reason}`)));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(woken).to.deep.equal(['a:poll']);
    await Promise.all(waits);
    expect(woken).to.deep.equal(['a:poll', 'b:poll']);
    expect(idle.count).to.equal(0);
  });

  it('once stopped, wakes every runner and lets none wait again', async () => {
    const idle = new IdleRunners(60_000);
    const waiting = idle.wait();
    idle.stop();
    expect(await waiting).to.equal('stop');
    expect(await idle.wait()).to.equal('stop');
  });
});
