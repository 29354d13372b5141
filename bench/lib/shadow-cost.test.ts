import { expect } from 'chai';
import { shadowCost, shadowTable, type ShadowRound } from './shadow-cost.js';

const round = (post: number, queued: number, shadows = 0): ShadowRound => ({
  post: { rps: 100, p50: post, p99: post * 3, requests: 1000, statuses: { 201: 1000 }, errors: 0, timeouts: 0 },
  queued: { p50: queued, p99: queued * 2 },
  total: { p50: queued + 12, p99: queued * 2 + 20 },
  completed: 1000,
  shadows,
  cpuMsPerPrimary: { public: 0.5, executor: 1 + shadows / 1000, modelServer: 0.2, postgres: 1.5, rabbitmq: 0.1 },
});

/** Rounds answered in turn from the lists, with the order of calls recorded. */
function fake(plain: ShadowRound[], shadowed: ShadowRound[]) {
  const calls: string[] = [];
  return {
    calls,
    control: { round: async (withShadow: boolean) => (calls.push(withShadow ? 'shadowed' : 'plain'), (withShadow ? shadowed : plain).shift()!) },
  };
}

describe('bench: POSTs through an alias with one shadow, against none', () => {
  it('takes the rounds in turns, the alias without a shadow first', async () => {
    const { control, calls } = fake([round(6, 8), round(6, 8)], [round(6, 8, 1000), round(6, 8, 1000)]);
    await shadowCost(control, 2, 100);
    expect(calls).to.deep.equal(['plain', 'shadowed', 'plain', 'shadowed']);
  });

  it('judges each figure by the median of the pairs’ ratios, within noise when the miss is under their spread', async () => {
    const { control } = fake([round(10, 10), round(10, 10), round(10, 10)], [round(9, 12, 1000), round(11, 10, 1000), round(10.5, 8, 1000)]);
    const report = await shadowCost(control, 3, 100);
    const post = report.targets.find((target) => target.id === '10 post-p50')!;
    expect(post.value).to.be.closeTo(1.05, 1e-9);
    expect(post.spread).to.be.closeTo(0.1, 1e-9);
    expect(post.verdict).to.equal('within noise');
    expect(report.targets.find((target) => target.id === '10 queued-p50')!.verdict).to.equal('met');
  });

  it('calls a POST slower beyond the spread missed', async () => {
    const { control } = fake([round(6, 8), round(7, 8), round(6, 8)], [round(60, 40, 1000), round(80, 60, 1000), round(55, 30, 1000)]);
    const report = await shadowCost(control, 3, 100);
    expect(report.targets.find((target) => target.id === '10 post-p50')!.verdict).to.equal('missed');
    expect(shadowTable(report, 'demo')).to.contain('| 2 | one shadow | 80.0 / 240.0 |');
  });
});
