import { expect } from 'chai';
import { judge, judgeAbsolute, spreadOf, targetsTable, verdictOf, type TargetSpec } from './verdict.js';

const throughput: TargetSpec = { id: '1', what: 'POST at saturation, req/s', baselineName: 'naive enqueue', comparison: 'ratio', bound: 1, better: 'higher' };
const latency: TargetSpec = { id: '4', what: 'queued p99 over direct, ms', baselineName: 'direct call', comparison: 'difference', bound: 25, better: 'lower' };

describe('bench: target verdicts', () => {
  it('meets a target whose median passes the bound, however noisy its pairs', () => {
    expect(verdictOf(1.1, 0.5, 1, 'higher')).to.equal('met');
    expect(verdictOf(20, 30, 25, 'lower')).to.equal('met');
  });

  it('calls a miss smaller than the spread of the pairs within noise, and a larger one missed', () => {
    expect(verdictOf(0.95, 0.1, 1, 'higher')).to.equal('within noise');
    expect(verdictOf(0.8, 0.1, 1, 'higher')).to.equal('missed');
    expect(verdictOf(27, 5, 25, 'lower')).to.equal('within noise');
    expect(verdictOf(40, 5, 25, 'lower')).to.equal('missed');
  });

  it('misses a target nothing finite was measured for', () => {
    expect(verdictOf(NaN, 1, 1, 'higher')).to.equal('missed');
  });

  it('takes the median of the pairs’ ratios and half their range as the spread', () => {
    const pairs = [
      { baseline: 100, didyma: 90 },
      { baseline: 100, didyma: 110 },
      { baseline: 200, didyma: 190 },
      { baseline: 100, didyma: 70 },
      { baseline: 100, didyma: 100 },
    ];
    const result = judge(throughput, pairs);
    expect(result.value).to.be.closeTo(0.95, 1e-9);
    expect(result.spread).to.be.closeTo((1.1 - 0.7) / 2, 1e-9);
    expect(result.baseline).to.equal(100);
    expect(result.verdict).to.equal('within noise');
  });

  it('compares latencies by difference', () => {
    const result = judge(latency, [
      { baseline: 10, didyma: 30 },
      { baseline: 12, didyma: 30 },
      { baseline: 11, didyma: 50 },
    ]);
    expect(result.value).to.equal(20);
    expect(result.verdict).to.equal('met');
  });

  it('judges a figure without pairs against its bound alone', () => {
    expect(judgeAbsolute({ id: '6', what: 'peak RSS, MiB', baselineName: '', bound: 150, better: 'lower' }, 151).verdict).to.equal('missed');
    expect(judgeAbsolute({ id: '6', what: 'peak RSS, MiB', baselineName: '', bound: 150, better: 'lower' }, 120).verdict).to.equal('met');
  });

  it('gives no spread for one value, and none for a non-finite one', () => {
    expect(spreadOf([3])).to.equal(0);
    expect(Number.isNaN(spreadOf([1, NaN]))).to.equal(true);
  });

  it('prints each target beside its baseline with its verdict', () => {
    const table = targetsTable([judge(throughput, [{ baseline: 1000, didyma: 500 }])]);
    expect(table).to.include('| 1 | POST at saturation, req/s | 500 | 1,000 (naive enqueue) | 0.50 × ± 0.00 (1 pairs) | ≥ 1.00 × | **missed** |');
  });
});
