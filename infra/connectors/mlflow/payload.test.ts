import { expect } from 'chai';
import { toScoringPayload, withContext } from './payload.js';

describe('MLflow scoring payload', () => {
  it('keeps a body already in one of the scoring server formats', () => {
    for (const body of [{ dataframe_split: { columns: ['a'], data: [[1]] } }, { dataframe_records: [{ a: 1 }] }, { instances: [[1, 2]] }, { inputs: { x: [1] }, params: { t: 1 } }]) {
      expect(toScoringPayload(JSON.stringify(body))).to.deep.equal(body);
    }
  });

  it('wraps {columns, data} as dataframe_split', () => {
    expect(toScoringPayload('{"columns": ["a", "b"], "data": [[1, 2]]}')).to.deep.equal({ dataframe_split: { columns: ['a', 'b'], data: [[1, 2]] } });
  });

  it('turns records, or a single record, into dataframe_split with every column', () => {
    expect(toScoringPayload('[{"a": 1, "b": 2}, {"b": 3, "c": "x"}]')).to.deep.equal({
      dataframe_split: { columns: ['a', 'b', 'c'], data: [[1, 2, null], [null, 3, 'x']] },
    });
    expect(toScoringPayload('{"a": 1.5, "b": "y"}')).to.deep.equal({ dataframe_split: { columns: ['a', 'b'], data: [[1.5, 'y']] } });
  });

  it('sends any other JSON as inputs, and text as a one-item inputs list', () => {
    expect(toScoringPayload('[[1, 2], [3, 4]]')).to.deep.equal({ inputs: [[1, 2], [3, 4]] });
    expect(toScoringPayload('{"image": [[0, 1]]}')).to.deep.equal({ inputs: { image: [[0, 1]] } });
    expect(toScoringPayload('Tell me a story')).to.deep.equal({ inputs: ['Tell me a story'] });
  });

  it('adds context as JSON text in params.context', () => {
    const context = [{ request: 'a', response: 'b' }];
    expect(withContext({ inputs: [1], params: { t: 1 } }, context)).to.deep.equal({ inputs: [1], params: { t: 1, context: JSON.stringify(context) } });
  });
});
