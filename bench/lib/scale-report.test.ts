import { expect } from 'chai';
import { percentile, scaleVerdicts, type ListFigures } from './scale-report.js';

const timing = (p50Ms: number) => ({ p50Ms, p99Ms: p50Ms * 2, pageBytes: 1000 });
const figures = (rows: number, first: number, after: number): ListFigures => ({ list: 'models', rows, firstPage: timing(first), afterDeep: timing(after), offsetDeep: timing(after * 10), count: { p50Ms: 1, plan: 'Index Only Scan' } });

describe('bench-scale verdicts', () => {
  it('takes the nearest-rank percentile', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).to.equal(3);
    expect(percentile([5, 1, 3, 2, 4], 99)).to.equal(5);
    expect(percentile([], 50)).to.equal(0);
  });

  it('meets a list whose p50 stays within 2× from the smallest size to the largest, and misses one that grows more', () => {
    const verdicts = scaleVerdicts({ lists: [figures(1000, 2, 2), figures(100000, 3.9, 4.5)], context: { calls: 0, windows: [] } });
    expect(verdicts.map((v) => v.met)).to.deep.equal([true, false]);
    expect(verdicts[1]!.figure).to.equal('2 → 4.5 ms (2.25×)');
  });

  it('judges the need_context session by its last calls against its first', () => {
    const windows = [{ calls: '1-100', runP50Ms: 4, totalP50Ms: 8 }, { calls: '901-1000', runP50Ms: 9, totalP50Ms: 12 }];
    expect(scaleVerdicts({ lists: [], context: { calls: 1000, windows } })).to.deep.equal([{ what: 'need_context run p50, calls 1-100 → 901-1000, within 2×', figure: '4 → 9 ms (2.25×)', met: false }]);
  });
});
