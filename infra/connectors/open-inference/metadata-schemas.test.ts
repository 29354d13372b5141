import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { toInferenceRequest } from './tensors.js';
import { elementSchema, metadataSchemas, METADATA_BOUNDS, type TensorMetadata } from './metadata-schemas.js';

const ajv = new Ajv2020({ strict: false });

/** Whether `body` (JSON text, as an invocation carries it) passes the schema derived for `inputs`. */
function accepts(inputs: TensorMetadata[], body: unknown): boolean {
  const { input } = metadataSchemas({ inputs, outputs: [] });
  return ajv.validate(input!.schema, body) as boolean;
}

describe('Open Inference metadata as schemas', () => {
  const iris: TensorMetadata[] = [{ name: 'input-0', datatype: 'FP32', shape: [-1, 4] }];
  const features: TensorMetadata[] = [
    { name: 'age', datatype: 'INT8', shape: [-1] },
    { name: 'tags', datatype: 'BYTES', shape: [-1, 2] },
  ];

  it('maps each datatype to the JSON values of its range', () => {
    const valid = (datatype: string, value: unknown) => ajv.validate(elementSchema(datatype), value);
    expect(valid('BOOL', true) && !valid('BOOL', 1)).to.equal(true);
    expect(valid('UINT8', 255) && !valid('UINT8', 256) && !valid('UINT8', -1) && !valid('UINT8', 1.5)).to.equal(true);
    expect(valid('INT8', -128) && !valid('INT8', -129)).to.equal(true);
    expect(valid('INT32', 2 ** 31 - 1) && !valid('INT32', 2 ** 31)).to.equal(true);
    expect(valid('UINT64', Number.MAX_SAFE_INTEGER) && !valid('INT64', 'x')).to.equal(true);
    expect(valid('FP16', 65_504) && !valid('FP16', 65_520)).to.equal(true);
    expect(valid('FP32', 1e38) && !valid('FP32', 1e39) && valid('FP64', 1e300)).to.equal(true);
    expect(valid('BYTES', 'text') && !valid('BYTES', 1)).to.equal(true);
    expect(elementSchema('FP8_E4M3')).to.deep.equal({});
  });

  it('accepts every body form the proxy sends for one input of shape [-1, 4], and refuses the others', () => {
    for (const body of [[5.1, 3.5, 1.4, 0.2], [[5.1, 3.5, 1.4, 0.2], [1, 2, 3, 4]], { 'input-0': [1, 2, 3, 4] }, [{ 'input-0': [1, 2, 3, 4] }]]) {
      expect(accepts(iris, body), JSON.stringify(body)).to.equal(true);
      // What the proxy sends of it has the declared rank and width.
      expect(toInferenceRequest(JSON.stringify(body)).inputs[0]!.shape[1]).to.equal(4);
    }
    expect(accepts(iris, { inputs: [{ name: 'input-0', datatype: 'FP32', shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] }] })).to.equal(true);
    for (const body of [[1, 2, 3], [[1, 2, 3, 4], [1, 2]], ['a', 'b', 'c', 'd'], { 'input-0': [1, 2, 3, 4], other: 1 }, [], 'text']) {
      expect(accepts(iris, body), JSON.stringify(body)).to.equal(false);
    }
    expect(accepts(iris, { inputs: [{ name: 'input-0', datatype: 'FP32', shape: [2, 3], data: [1] }] })).to.equal(false);
    expect(accepts(iris, { inputs: [{ name: 'input-0', datatype: 'INT64', shape: [2, 4], data: [1] }] })).to.equal(false);
    expect(accepts(iris, { inputs: [{ name: 'other', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }] })).to.equal(false);
  });

  it('takes several inputs as a record of features or an inference request naming each', () => {
    expect(accepts(features, { age: 30, tags: ['a', 'b'] })).to.equal(true);
    expect(accepts(features, [{ age: 30, tags: ['a', 'b'] }, { age: 31, tags: ['c', 'd'] }])).to.equal(true);
    expect(accepts(features, { age: 300, tags: ['a', 'b'] })).to.equal(false);
    expect(accepts(features, { age: 30 })).to.equal(false);
    expect(accepts(features, [30, 31])).to.equal(false);
    const age = { name: 'age', datatype: 'INT8', shape: [1], data: [30] };
    const tags = { name: 'tags', datatype: 'BYTES', shape: [1, 2], data: ['a', 'b'] };
    expect(accepts(features, { inputs: [age, tags] })).to.equal(true);
    expect(accepts(features, { inputs: [age, age] })).to.equal(false);
  });

  it('holds a fixed first dimension to batches of that size, and leaves records out for ranks past two', () => {
    const pair: TensorMetadata[] = [{ name: 'x', datatype: 'FP64', shape: [2, 3] }];
    expect(accepts(pair, [[1, 2, 3], [4, 5, 6]])).to.equal(true);
    expect(accepts(pair, [1, 2, 3])).to.equal(false);
    expect(accepts(pair, [[1, 2, 3]])).to.equal(false);
    const image: TensorMetadata[] = [{ name: 'image', datatype: 'UINT8', shape: [-1, 2, 2, 3] }];
    expect(accepts(image, { image: [[[1, 2, 3]]] })).to.equal(false);
    expect(accepts(image, { inputs: [{ name: 'image', datatype: 'UINT8', shape: [1, 2, 2, 3], data: new Array(12).fill(7) }] })).to.equal(true);
  });

  it('describes the outputs of an inference response, and nothing past its bounds', () => {
    const { output } = metadataSchemas({ inputs: [], outputs: [{ name: 'predict', datatype: 'BYTES', shape: [-1] }] });
    expect(output!.description).to.equal("From the model's Open Inference metadata: an inference response whose outputs are predict (BYTES, shape any).");
    expect(ajv.validate(output!.schema, { model_name: 'iris', outputs: [{ name: 'predict', datatype: 'BYTES', shape: [1], data: ['setosa'] }] })).to.equal(true);
    expect(ajv.validate(output!.schema, { model_name: 'iris', outputs: [{ name: 'predict', datatype: 'FP32', shape: [1], data: [1] }] })).to.equal(false);
    const many = Array.from({ length: METADATA_BOUNDS.tensors + 1 }, (_, i) => ({ name: `x${i}`, datatype: 'FP32', shape: [-1] }));
    expect(metadataSchemas({ inputs: many, outputs: [{ name: 'y', datatype: 'FP32', shape: [-1] }] }).input).to.equal(undefined);
    expect(metadataSchemas({ inputs: [{ name: 'x', datatype: 'FP32', shape: new Array(METADATA_BOUNDS.dimensions + 1).fill(1) }] })).to.deep.equal({});
    expect(metadataSchemas({ inputs: [{ name: 'x', datatype: 'FP32', shape: [-2] }] })).to.deep.equal({});
    expect(metadataSchemas({})).to.deep.equal({});
  });
});
