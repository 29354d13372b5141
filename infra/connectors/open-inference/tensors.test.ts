import { expect } from 'chai';
import { InputError } from '../../../kernel/errors/errors.js';
import { toInferenceRequest, withContext } from './tensors.js';

describe('Open Inference request encoding', () => {
  it('keeps a body that already is an Open Inference request', () => {
    const request = { id: 'r1', inputs: [{ name: 'x', shape: [1, 2], datatype: 'FP32', data: [1, 2] }], parameters: { a: 1 } };
    expect(toInferenceRequest(JSON.stringify(request))).to.deep.equal(request);
  });

  it('turns an object of features into one tensor per feature, typed by its values', () => {
    const body = JSON.stringify({ sepal_length: 5.1, count: 3, flag: true, colour: 'red', pixels: [0.5, 1, 2] });
    expect(toInferenceRequest(body).inputs).to.deep.equal([
      { name: 'sepal_length', shape: [1], datatype: 'FP64', data: [5.1] },
      { name: 'count', shape: [1], datatype: 'INT64', data: [3] },
      { name: 'flag', shape: [1], datatype: 'BOOL', data: [true] },
      { name: 'colour', shape: [1], datatype: 'BYTES', data: ['red'] },
      { name: 'pixels', shape: [1, 3], datatype: 'FP64', data: [0.5, 1, 2] },
    ]);
  });

  it('turns an array of objects into a batch, one value per record in each tensor', () => {
    const body = JSON.stringify([
      { a: 1, b: [1, 2] },
      { a: 2.5, b: [3, 4] },
    ]);
    expect(toInferenceRequest(body).inputs).to.deep.equal([
      { name: 'a', shape: [2], datatype: 'FP64', data: [1, 2.5] },
      { name: 'b', shape: [2, 2], datatype: 'INT64', data: [1, 2, 3, 4] },
    ]);
  });

  it('turns a list of rows, or one row, into a single FP64 tensor input-0', () => {
    expect(toInferenceRequest('[[5.1, 3.5, 1.4, 0.2], [6, 3, 5, 2]]').inputs).to.deep.equal([{ name: 'input-0', shape: [2, 4], datatype: 'FP64', data: [5.1, 3.5, 1.4, 0.2, 6, 3, 5, 2] }]);
    expect(toInferenceRequest('[1, 2, 3]').inputs).to.deep.equal([{ name: 'input-0', shape: [1, 3], datatype: 'FP64', data: [1, 2, 3] }]);
  });

  it('sends text that is not JSON as one BYTES tensor, and an empty body as no inputs', () => {
    expect(toInferenceRequest('What is an iris?').inputs).to.deep.equal([{ name: 'input-0', shape: [1], datatype: 'BYTES', data: ['What is an iris?'] }]);
    expect(toInferenceRequest('  ').inputs).to.deep.equal([]);
  });

  it('refuses what no tensor can hold, saying where', () => {
    const cases: Array<[string, RegExp]> = [
      ['{"a": {"nested": 1}}', /feature "a" must be a number, string, boolean or an array of them/],
      ['{"a": [1, "x"]}', /feature "a" mixes numbers, strings or booleans/],
      ['[{"a": 1}, {"b": 2}]', /record 1 does not have the same features as record 0 \("a"\)/],
      ['[[1, 2], [3]]', /row 1 has 1 values, row 0 has 2/],
      ['[1, {"a": 1}]', /not a mixture/],
      ['[]', /is an empty array/],
      ['null', /is null/],
    ];
    for (const [body, message] of cases) {
      expect(() => toInferenceRequest(body), body).to.throw(InputError, message);
    }
  });

  it('adds context as JSON text in parameters.context, keeping other parameters', () => {
    const context = [{ request: '{"a":1}', response: '{"outputs":[]}' }];
    const request = withContext({ inputs: [], parameters: { keep: 'me' } }, context);
    expect(request.parameters).to.deep.equal({ keep: 'me', context: JSON.stringify(context) });
    expect(withContext({ inputs: [] }, [])).to.deep.equal({ inputs: [] });
  });
});
