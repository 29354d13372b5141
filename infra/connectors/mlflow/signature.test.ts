import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { RegistrySchema } from '../types.js';
import { SignatureError, signatureSchemas } from './signature.js';

const ajv = new Ajv2020({ strict: true });
const accepts = (schema: RegistrySchema | undefined, value: unknown) => ajv.validate(schema!.schema, value);

// Signatures as MLflow writes them into an MLmodel file (JSON text under `inputs` and `outputs`).
const IRIS = {
  inputs: JSON.stringify([
    { type: 'double', name: 'sepal length (cm)', required: true },
    { type: 'double', name: 'sepal width (cm)', required: true },
    { type: 'long', name: 'count', required: false },
  ]),
  outputs: JSON.stringify([{ type: 'tensor', 'tensor-spec': { dtype: 'str', shape: [-1] } }]),
};

describe('MLflow signature → input and output schemas', () => {
  describe('column-based', () => {
    const { input, output } = signatureSchemas(IRIS);

    it('lists the columns as fields and in the description', () => {
      expect(input?.fields).to.deep.equal([
        { name: 'sepal length (cm)', type: 'double', required: true },
        { name: 'sepal width (cm)', type: 'double', required: true },
        { name: 'count', type: 'long', required: false },
      ]);
      expect(input?.description).to.equal('From the MLflow signature: columns sepal length (cm) (double), sepal width (cm) (double), count (long, optional).');
      expect(input?.type).to.equal('json');
    });

    it('accepts one record, a list of records and a split frame with the required columns, typed', () => {
      expect(accepts(input, { 'sepal length (cm)': 5.1, 'sepal width (cm)': 3.5 })).to.equal(true);
      expect(accepts(input, [{ 'sepal length (cm)': 5.1, 'sepal width (cm)': 3.5, count: 2 }, { 'sepal length (cm)': 6, 'sepal width (cm)': 3, count: null }])).to.equal(true);
      expect(accepts(input, { columns: ['sepal length (cm)', 'sepal width (cm)'], data: [[5.1, 3.5]] })).to.equal(true);
    });

    it('refuses a missing required column, a wrong type, an unknown split column and an empty list', () => {
      expect(accepts(input, { 'sepal length (cm)': 5.1 })).to.equal(false);
      expect(accepts(input, { 'sepal length (cm)': 'long', 'sepal width (cm)': 3.5 })).to.equal(false);
      expect(accepts(input, { 'sepal length (cm)': 5.1, 'sepal width (cm)': 3.5, count: 1.5 })).to.equal(false);
      expect(accepts(input, { columns: ['petal'], data: [[1]] })).to.equal(false);
      expect(accepts(input, { columns: ['sepal length (cm)'], data: [[5.1]] })).to.equal(false);
      expect(accepts(input, [])).to.equal(false);
    });

    it('describes the predictions of a tensor output', () => {
      expect(output?.description).to.equal("From the MLflow signature: the scoring server's predictions, tensor of str, shape any.");
      expect(accepts(output, { predictions: ['setosa', 'virginica'] })).to.equal(true);
      expect(accepts(output, { predictions: [1] })).to.equal(false);
    });

    it('maps nested array, object and map columns, and unnamed columns by position', () => {
      const nested = signatureSchemas({
        inputs: JSON.stringify([
          { type: 'array', name: 'tokens', items: { type: 'string' } },
          { type: 'object', name: 'meta', properties: { lang: { type: 'string', required: true }, score: { type: 'float', required: false } } },
          { type: 'map', name: 'weights', values: { type: 'double' } },
          { type: 'boolean', name: 'flag' },
        ]),
      }).input;
      expect(accepts(nested, { tokens: ['a', 'b'], meta: { lang: 'en' }, weights: { x: 0.5 }, flag: true })).to.equal(true);
      expect(accepts(nested, { tokens: [1], meta: { lang: 'en' }, weights: {}, flag: true })).to.equal(false);
      expect(accepts(nested, { tokens: [], meta: { score: 1 }, weights: {}, flag: true })).to.equal(false);
      expect(accepts(nested, { tokens: [], meta: { lang: 'en' }, weights: { x: 'heavy' }, flag: true })).to.equal(false);
      expect(nested?.fields?.map((f) => f.type)).to.deep.equal(['array of string', 'object', 'map of double', 'boolean']);

      const unnamed = signatureSchemas({ inputs: JSON.stringify([{ type: 'double' }, { type: 'string' }]) }).input;
      expect(accepts(unnamed, [1.5, 'a'])).to.equal(true);
      expect(accepts(unnamed, [[1.5, 'a'], [2, 'b']])).to.equal(true);
      expect(accepts(unnamed, ['a', 1.5])).to.equal(false);
    });
  });

  describe('tensor-based', () => {
    it('turns one unnamed tensor into nested arrays: -1 any length, other sizes exact, typed by dtype', () => {
      const { input, output } = signatureSchemas({
        inputs: JSON.stringify([{ type: 'tensor', 'tensor-spec': { dtype: 'float32', shape: [-1, 28, 28] } }]),
        outputs: JSON.stringify([{ type: 'tensor', 'tensor-spec': { dtype: 'int64', shape: [-1] } }]),
      });
      const image = Array.from({ length: 28 }, () => new Array<number>(28).fill(0.5));
      expect(input?.description).to.equal('From the MLflow signature: tensor of float32, shape any × 28 × 28.');
      expect(accepts(input, [image, image])).to.equal(true);
      expect(accepts(input, [image.slice(1)])).to.equal(false);
      expect(accepts(input, [image.map((row) => row.map(String))])).to.equal(false);
      expect(accepts(output, { predictions: [3, 7] })).to.equal(true);
      expect(accepts(output, { predictions: [3.5] })).to.equal(false);
    });

    it('turns named tensors into an object of them, each required', () => {
      const { input } = signatureSchemas({
        inputs: JSON.stringify([
          { type: 'tensor', name: 'ids', 'tensor-spec': { dtype: 'int32', shape: [-1, 3] } },
          { type: 'tensor', name: 'mask', 'tensor-spec': { dtype: 'bool', shape: [-1, 3] } },
        ]),
      });
      expect(accepts(input, { ids: [[1, 2, 3]], mask: [[true, true, false]] })).to.equal(true);
      expect(accepts(input, { ids: [[1, 2, 3]] })).to.equal(false);
      expect(accepts(input, { ids: [[1, 2]], mask: [[true, true]] })).to.equal(false);
    });
  });

  it('leaves out a side the signature does not give', () => {
    expect(signatureSchemas({ inputs: IRIS.inputs, outputs: null })).to.have.keys('input');
    expect(signatureSchemas({})).to.deep.equal({});
  });

  it('refuses what MLflow does not write, saying what is wrong', () => {
    expect(() => signatureSchemas({ inputs: 'not json' })).to.throw(SignatureError, "the signature's inputs are not JSON");
    expect(() => signatureSchemas({ inputs: '[]' })).to.throw(SignatureError, 'not a list of column or tensor specs');
    expect(() => signatureSchemas({ inputs: JSON.stringify([{ type: 'decimal', name: 'x' }]) })).to.throw(SignatureError, 'unknown type "decimal"');
    expect(() => signatureSchemas({ inputs: JSON.stringify([{ type: 'tensor', 'tensor-spec': { dtype: 'complex64', shape: [-1] } }]) })).to.throw(SignatureError, 'unknown dtype');
    expect(() => signatureSchemas({ inputs: JSON.stringify([{ type: 'tensor', 'tensor-spec': { dtype: 'float32', shape: [-1] } }, { type: 'double', name: 'x' }]) })).to.throw(SignatureError, 'mixes');
  });
});
