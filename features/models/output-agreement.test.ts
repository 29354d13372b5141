import { expect } from 'chai';
import { InputError } from '../../kernel/errors/errors.js';
import { outputsAgree, outputsOf } from './output-agreement.js';
import { MAX_COMPARED_PAIRS, presentAgreement, toleranceOf } from './shadow-agreement.js';

const openInference = (version: string, data: unknown[], name = 'label') =>
  JSON.stringify({ model_name: 'iris', model_version: version, id: version, outputs: [{ name, shape: [data.length], datatype: 'BYTES', data }] });

describe('agreement of a shadow with its primary', () => {
  it("reads an Open Inference answer's tensors by name, a v1 or MLflow answer's predictions, else the document", () => {
    expect(outputsOf(openInference('2', ['setosa']))).to.deep.equal({ label: ['setosa'] });
    expect(outputsOf('{"predictions": [1, 0]}')).to.deep.equal([1, 0]);
    expect(outputsOf('{"score": 0.5}')).to.deep.equal({ score: 0.5 });
    expect(outputsOf('[true]')).to.deep.equal([true]);
    expect(outputsOf('not json')).to.equal('not json');
    // The answering model's name, version and request id are not outputs: two versions answering alike agree.
    expect(outputsAgree(outputsOf(openInference('1', ['setosa'])), outputsOf(openInference('2', ['setosa'])), 0)).to.equal(true);
  });

  it('compares labels exactly: strings, booleans, integers and null', () => {
    expect(outputsAgree(['cat', true, 3, null], ['cat', true, 3, null], 1e-6)).to.equal(true);
    expect(outputsAgree(['cat'], ['Cat'], 1e-6)).to.equal(false);
    expect(outputsAgree([true], [false], 1e-6)).to.equal(false);
    // Integers are labels: a tolerance never makes two of them agree.
    expect(outputsAgree(1, 2, 10)).to.equal(false);
    expect(outputsAgree('1', 1, 10)).to.equal(false);
    expect(outputsAgree(null, 0, 10)).to.equal(false);
  });

  it('compares numbers within the tolerance, its edge included', () => {
    expect(outputsAgree(1.5, 1.75, 0.25)).to.equal(true);
    expect(outputsAgree(1.75, 1.5, 0.25)).to.equal(true);
    expect(outputsAgree(1.5, 1.8, 0.25)).to.equal(false);
    expect(outputsAgree(0.1, 0.1000001, 1e-6)).to.equal(true);
    expect(outputsAgree(0.1, 0.100002, 1e-6)).to.equal(false);
    // A number that is not an integer against one that is: within the tolerance.
    expect(outputsAgree(2, 2.125, 0.125)).to.equal(true);
    expect(outputsAgree(0.5, 0.5, 0)).to.equal(true);
  });

  it('compares arrays element-wise (a length mismatch disagrees) and objects key by key', () => {
    expect(outputsAgree([[1.5, 'a'], [2.5, 'b']], [[1.5, 'a'], [2.5, 'b']], 0)).to.equal(true);
    expect(outputsAgree([1.5, 2.5], [1.5], 1)).to.equal(false);
    expect(outputsAgree([], [], 0)).to.equal(true);
    expect(outputsAgree([1], { 0: 1 }, 0)).to.equal(false);
    expect(outputsAgree({ a: 1, b: [0.5] }, { b: [0.5000001], a: 1 }, 1e-6)).to.equal(true);
    expect(outputsAgree({ a: 1 }, { a: 1, b: 2 }, 0)).to.equal(false);
    expect(outputsAgree({ a: 1, b: undefined }, { a: 1, c: undefined }, 0)).to.equal(false);
  });

  it('counts the pairs with a Wilson interval, and flags pairs beyond the cap', () => {
    const pair = (primary: unknown[], shadow: unknown[]) => ({ primary_response: openInference('1', primary), shadow_response: openInference('2', shadow) });
    const agreement = presentAgreement([pair(['a'], ['a']), pair(['a'], ['a']), pair(['a'], ['a']), pair(['a'], ['b'])], 1e-6);
    expect(agreement).to.deep.include({ compared: 4, agreed: 3, rate: 0.75, tolerance: 1e-6, max_compared: MAX_COMPARED_PAIRS, truncated: false });
    expect(agreement.interval!.low).to.be.closeTo(0.30064, 1e-5);
    expect(agreement.interval!.high).to.be.closeTo(0.95441, 1e-5);
    expect(presentAgreement([], 0)).to.deep.include({ compared: 0, agreed: 0, rate: null, interval: null });
    const many = presentAgreement(Array.from({ length: MAX_COMPARED_PAIRS + 1 }, () => pair([1], [1])), 0);
    expect(many).to.deep.include({ compared: MAX_COMPARED_PAIRS, agreed: MAX_COMPARED_PAIRS, truncated: true });
  });

  it('takes a tolerance from 0 to 1e6, 1e-6 by default, and refuses anything else', () => {
    expect(toleranceOf(undefined)).to.equal(1e-6);
    expect(toleranceOf('0.25')).to.equal(0.25);
    expect(toleranceOf('0')).to.equal(0);
    expect(toleranceOf('1e6')).to.equal(1e6);
    for (const bad of ['', ' ', '-0.1', 'abc', '1e7', 'Infinity', 'NaN', ['1', '2']]) expect(() => toleranceOf(bad), String(bad)).to.throw(InputError);
  });
});
