import { expect } from 'chai';
import { drainRound, interleaved, interleavedDrains, nextBacklog, type DrainContender, type DrainOptions } from './queues.js';

/** A queue drained at `rate` per second of a simulated clock while resumed; every sleep moves the clock. */
function simulated(rate: number) {
  let clock = 0;
  let queued = 0;
  let running = false;
  const completions: number[] = [];
  const calls: string[] = [];
  const sleep = async (ms: number) => {
    const steps = Math.round(ms);
    for (let step = 0; step < steps; step++) {
      clock += 1;
      if (running && queued > 0 && Math.floor((clock * rate) / 1000) > Math.floor(((clock - 1) * rate) / 1000)) {
        queued--;
        completions.push(clock);
      }
    }
  };
  const contender: DrainContender = {
    fill: async (count) => {
      calls.push(`fill ${count}`);
      queued += count;
    },
    pause: () => {
      running = false;
    },
    resume: () => {
      running = true;
    },
    queued: async () => queued,
    open: async () => queued,
    completedBetween: async (from, to) => completions.filter((at) => at >= from.getTime() && at < to.getTime()).length,
    meter: () => () => ({ consumer: 1, postgres: 2, model: 0 }),
  };
  return { contender, sleep, now: () => new Date(clock), calls, running: () => running };
}

const options = (sim: ReturnType<typeof simulated>): DrainOptions => ({ warmUpSec: 1, windowSec: 4, firstBacklog: 1000, slack: 1, pollMs: 50, timeoutMs: 60_000, sleep: sim.sleep, now: sim.now });

describe('bench: the queue comparison’s rounds', () => {
  it('takes every contender once per round, in the order given', async () => {
    const order: string[] = [];
    const runs = await interleaved(['baseline', 'didyma'] as const, 3, async (name, round) => {
      order.push(`${name}${round}`);
      return round;
    });
    expect(order).to.deep.equal(['baseline0', 'didyma0', 'baseline1', 'didyma1', 'baseline2', 'didyma2']);
    expect(runs.didyma).to.deep.equal([0, 1, 2]);
  });

  it('counts a drain’s rate over its window, after the warm-up, and leaves the consumer paused with nothing left', async () => {
    const sim = simulated(200);
    const run = await drainRound(sim.contender, 2000, options(sim));
    expect(run.rps).to.be.closeTo(200, 5);
    expect(run.seconds).to.be.closeTo(4, 0.1);
    expect(run.ranDry).to.equal(false);
    expect(run.cpuUsPerInvocation.postgres).to.be.closeTo(2e6 / run.completed, 1e-6);
    expect(await sim.contender.open()).to.equal(0);
    expect(sim.running()).to.equal(false);
  });

  it('cuts the window short when the backlog runs out, and says so', async () => {
    const sim = simulated(200);
    const run = await drainRound(sim.contender, 500, options(sim));
    expect(run.ranDry).to.equal(true);
    expect(run.seconds).to.be.below(2);
  });

  it('sizes the next backlog from the last rate over warm-up and window, a third more', () => {
    expect(nextBacklog(undefined, { warmUpSec: 1, windowSec: 4, firstBacklog: 1000, slack: 16 })).to.equal(1000);
    expect(nextBacklog({ rps: 300 } as never, { warmUpSec: 1, windowSec: 4, firstBacklog: 1000, slack: 16 })).to.equal(2016);
  });

  it('takes a round again with a larger backlog when it ran out early in its window', async () => {
    const sim = simulated(1000);
    const runs = await interleavedDrains({ only: sim.contender }, ['only'], 1, { ...options(sim), firstBacklog: 1500 }, () => undefined);
    expect(sim.calls[0]).to.equal('fill 1500');
    expect(sim.calls.length).to.be.greaterThan(1);
    expect(runs.only[0]!.ranDry && runs.only[0]!.seconds < 2).to.equal(false);
  });
});
