import { expect } from 'chai';
import type { LoadResult } from './load.js';
import { pairedDrain, type DrainControl } from './paired-drain.js';

const run = (rps: number, cpuUsPerRequest = 1200): LoadResult & { cpuUsPerRequest: number } => ({ rps, p50: 9, p99: 14, requests: rps * 4, statuses: { 200: rps * 4 }, errors: 0, timeouts: 0, cpuUsPerRequest });

/**
 * A drain on a virtual clock: the executor completes `rates[i]` per second in
 * its i-th segment, the model server's maxima come from `maxima` in turn, and
 * each second the executor runs costs it 0.5 s of CPU and the model server 0.8 s.
 */
function fakeDrain(options: { backlog: number; rates: number[]; maxima: number[] }) {
  let clock = Date.parse('2026-11-22T00:00:00Z');
  let queued = options.backlog;
  let running = true;
  let segment = -1;
  const events: string[] = [];
  const cpu = [0, 0];
  const completions: Array<{ at: number; count: number }> = [];
  const sleep = async (ms: number) => {
    if (running && segment >= 0) {
      const count = Math.min(queued, Math.round(((options.rates[segment] ?? 0) * ms) / 1000));
      queued -= count;
      completions.push({ at: clock + ms / 2, count });
      cpu[0]! += (ms / 1000) * 0.5;
      cpu[1]! += (ms / 1000) * 0.8;
    }
    clock += ms;
  };
  let maxIndex = 0;
  const control: DrainControl = {
    pause: () => void ((running = false), events.push('pause')),
    resume: () => void ((running = true), (segment += 1), events.push('resume')),
    measureMax: async () => (events.push('max'), run(options.maxima[maxIndex++]!)),
    completedBetween: async (from, to) => completions.filter((c) => c.at >= from.getTime() && c.at < to.getTime()).reduce((sum, c) => sum + c.count, 0),
    queued: async () => queued,
    cpuSince: () => {
      const before = [...cpu];
      return () => [cpu[0]! - before[0]!, cpu[1]! - before[1]!];
    },
  };
  return { control, events, sleep, now: () => new Date(clock) };
}

const options = { warmUpSec: 3, segmentSec: 6, maxSegments: 3, settleMs: 500 };

describe('bench: the executor drain, paired with the model server’s maximum', () => {
  it('sets each segment against the mean of the maxima before and after it, and gives the medians', async () => {
    const drain = fakeDrain({ backlog: 100_000, rates: [600, 700, 640], maxima: [800, 750, 900, 850] });
    const result = await pairedDrain(drain.control, { ...options, sleep: drain.sleep, now: drain.now });
    expect(drain.events).to.deep.equal(['pause', 'max', 'resume', 'pause', 'max', 'resume', 'pause', 'max', 'resume', 'pause', 'max', 'resume']);
    expect(result.segments.map((s) => [s.completed, s.rps, s.maxBefore, s.maxAfter])).to.deep.equal([
      [3600, 600, 800, 750],
      [4200, 700, 750, 900],
      [3840, 640, 900, 850],
    ]);
    expect(result.segments.map((s) => s.ratio.toFixed(4))).to.deep.equal([(600 / 775).toFixed(4), (700 / 825).toFixed(4), (640 / 875).toFixed(4)]);
    expect(result.ratio).to.equal(600 / 775); // the median of 0.774, 0.848 and 0.731
    expect(result.rps).to.equal(640);
    expect(result.modelMax.rps).to.equal(800); // the lower middle of 750, 800, 850, 900
    // 18 s measured: 9 s of the executor's CPU and 14.4 s of the model server's over 11,640 invocations.
    expect(result.cpuUsPerInvocation).to.be.closeTo((9 * 1e6) / 11_640, 1e-6);
    expect(result.modelCpuUsPerCall).to.be.closeTo((14.4 * 1e6) / 11_640, 1e-6);
  });

  it('starts no segment the backlog could not fill, and leaves the executor running', async () => {
    // 10,000 queued after the warm-up. Each segment drains 3,900 (its 0.5 s of settling included) and needs 4/3 of the last one's 3,600
    // queued before it starts: the first needs 6,400 (4/3 of the maximum's 4,800) of 10,000, the second 4,800 of 6,100, the third 4,800 of 2,200.
    const drain = fakeDrain({ backlog: 10_000, rates: [600, 600, 600], maxima: [800, 800, 800, 800] });
    const result = await pairedDrain(drain.control, { ...options, sleep: drain.sleep, now: drain.now });
    expect(result.segments.map((s) => s.completed)).to.deep.equal([3600, 3600]);
    expect(drain.events.at(-1)).to.equal('resume');
  });

  it('gives no figure, rather than a wrong one, when the backlog is too small for one segment', async () => {
    const drain = fakeDrain({ backlog: 1000, rates: [600], maxima: [800] });
    const result = await pairedDrain(drain.control, { ...options, sleep: drain.sleep, now: drain.now });
    expect(result.segments).to.deep.equal([]);
    expect(Number.isNaN(result.ratio)).to.equal(true);
    expect(drain.events).to.deep.equal(['pause', 'max', 'resume']);
  });

  it('lets the executor go on when a measurement fails', async () => {
    const drain = fakeDrain({ backlog: 100_000, rates: [600], maxima: [800] });
    const failing = { ...drain.control, measureMax: () => Promise.reject(new Error('the model server went away')) };
    const error = await pairedDrain(failing, { ...options, sleep: drain.sleep, now: drain.now }).catch((e: unknown) => e);
    expect((error as Error).message).to.equal('the model server went away');
    expect(drain.events).to.deep.equal(['pause', 'resume']);
  });
});
