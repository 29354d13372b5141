import { expect } from 'chai';
import type { LoadResult } from './load.js';
import { pairedLatency, type LatencyControl } from './paired-latency.js';

const direct = (p50: number, p99: number): LoadResult => ({ rps: 150, p50, p99, requests: 1500, statuses: { 200: 1500 }, errors: 0, timeouts: 0 });

/** Direct runs and end-to-end rounds answered in turn from the lists, with the order of calls recorded. */
function fake(directs: Array<[number, number]>, rounds: Array<[number, number]>) {
  const calls: string[] = [];
  let d = 0;
  let e = 0;
  const control: LatencyControl = {
    direct: async () => (calls.push('direct'), direct(...directs[d++]!)),
    endToEnd: async () => {
      calls.push('end-to-end');
      const [p50, p99] = rounds[e++]!;
      return { p50, p99, count: 1500 };
    },
  };
  return { control, calls };
}

describe('bench: end-to-end latency, paired with direct calls', () => {
  it('alternates direct runs and rounds, a direct run on either side of each round', async () => {
    const { control, calls } = fake(
      [
        [2, 4],
        [3, 5],
        [2, 6],
      ],
      [
        [8, 30],
        [9, 40],
      ],
    );
    await pairedLatency(control, 2);
    expect(calls).to.deep.equal(['direct', 'end-to-end', 'direct', 'end-to-end', 'direct']);
  });

  it('sets each round against the lower p50 and the lower p99 of the direct runs around it', async () => {
    const { control } = fake(
      [
        [2, 9],
        [4, 5],
        [3, 20],
      ],
      [
        [10, 40],
        [12, 60],
      ],
    );
    const result = await pairedLatency(control, 2);
    expect(result.pairs.map((pair) => [pair.direct, pair.over])).to.deep.equal([
      [
        { p50: 2, p99: 5 },
        { p50: 8, p99: 35 },
      ],
      [
        { p50: 3, p99: 5 },
        { p50: 9, p99: 55 },
      ],
    ]);
    expect(result.directs.map((run) => run.p50)).to.deep.equal([2, 4, 3]);
  });

  it('gives the median of the rounds’ differences, so one disturbed round does not decide', async () => {
    const { control } = fake(
      [
        [2, 4],
        [2, 4],
        [2, 4],
        [2, 4],
      ],
      [
        [7, 30],
        [400, 1500],
        [9, 44],
      ],
    );
    const result = await pairedLatency(control, 3);
    expect(result.over).to.deep.equal({ p50: 7, p99: 40 });
  });

  it('refuses zero rounds', async () => {
    const { control } = fake([], []);
    let error: unknown;
    await pairedLatency(control, 0).catch((e: unknown) => (error = e));
    expect((error as Error).message).to.match(/at least one round/);
  });
});
