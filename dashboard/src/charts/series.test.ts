import { expect } from 'chai';
import { seriesFromMatrix } from './series.js';

describe('dashboard chart series', () => {
  it('turns a matrix answer into lines named by their labels, less the workspace', () => {
    const series = seriesFromMatrix('total_invocations', {
      resultType: 'matrix',
      result: [
        { metric: { workspace: 'acme' }, values: [[100, '1'], [160, '2.5']] },
        { metric: { workspace: 'acme', status: 'ERROR', type: 'PREDICT' }, values: [[100, 'NaN'], [160, '+Inf'], [220, '3']] },
      ],
    });
    expect(series).to.deep.equal([
      { label: 'total_invocations', points: [[100, 1], [160, 2.5]] },
      { label: 'status=ERROR, type=PREDICT', points: [[220, 3]] },
    ]);
  });

  it('names the lines of quantiles as percentiles', () => {
    const series = seriesFromMatrix('queue_wait_seconds', {
      resultType: 'matrix',
      result: [
        { metric: { workspace: 'acme', quantile: '0.5' }, values: [[100, '0.2']] },
        { metric: { workspace: 'acme', quantile: '0.99' }, values: [[100, '1.5']] },
        { metric: { workspace: 'acme', quantile: '0.999' }, values: [[100, 'NaN']] },
      ],
    });
    expect(series.map((s) => s.label)).to.deep.equal(['p50', 'p99', 'p99.9']);
  });

  it('has no lines for an instant answer', () => {
    expect(seriesFromMatrix('x', { resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }] })).to.deep.equal([]);
  });
});
