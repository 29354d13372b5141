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

  it('has no lines for an instant answer', () => {
    expect(seriesFromMatrix('x', { resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }] })).to.deep.equal([]);
  });
});
