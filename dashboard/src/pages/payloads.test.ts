import { expect } from 'chai';
import { MAX_VALUES, numberText, payload } from './payloads.js';

/** What a reader sees: the markup without its tags. */
const seen = (text: string) => payload(text).text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();

describe('dashboard payloads', () => {
  const response = JSON.stringify({
    model_name: 'iris-classifier',
    outputs: [
      { name: 'predicted_class', datatype: 'BYTES', shape: [1], data: ['setosa'] },
      { name: 'probabilities', datatype: 'FP64', shape: [2, 3], data: [0.97812345, 0.0212, 0.0006789, 0.1, 0.2, 0.7], parameters: { classes: 'setosa,versicolor,virginica' } },
    ],
  });

  it('shows each output tensor by name with its values, rows of a matrix one per line', () => {
    const markup = payload(response).text;
    expect(seen(response)).to.equal('predicted_class BYTES [1] setosa probabilities FP64 [2 × 3] 0.9781 0.0212 0.0006789 0.1 0.2 0.7 classes setosa,versicolor,virginica');
    expect(markup).to.contain('<table class="matrix"><tbody><tr><td>0.9781</td><td>0.0212</td><td>0.0006789</td></tr><tr>');
    expect(markup).not.to.contain('{&quot;');
  });

  it('shows the tensors of an inference request, and the fields of a JSON object', () => {
    expect(seen(JSON.stringify({ inputs: [{ name: 'petal_length', datatype: 'FP64', shape: [1], data: [1.4] }] }))).to.equal('petal_length FP64 [1] 1.4');
    expect(seen('{"sepal_length":5.1,"correct":true,"note":null,"tags":["a","b"]}')).to.equal('sepal_length 5.1 correct true note null tags a b');
  });

  it('keeps text that is not JSON as it is, escaped', () => {
    expect(payload('<b>great</b> model').text).to.equal('<p class="payload-text">&lt;b&gt;great&lt;/b&gt; model</p>');
    expect(seen('')).to.equal('empty');
  });

  it('shows at most a page of values and says how many more there are', () => {
    const data = Array.from({ length: MAX_VALUES + 5 }, (_, i) => i);
    expect(seen(JSON.stringify({ outputs: [{ name: 'y', datatype: 'INT64', shape: [data.length], data }] }))).to.match(/ 47 and 5 more values$/);
  });

  it('draws per-class probabilities of a result as bars, one chart per row, the class names beside them and not repeated', () => {
    const markup = payload(response, { charts: true }).text;
    expect(markup.match(/<svg /g)).to.have.length(2);
    expect(markup).to.contain('aria-label="probabilities, row 1: setosa 0.9781, versicolor 0.0212, virginica 0.0006789."');
    expect(markup).not.to.contain('<table class="matrix">').and.not.to.contain('<dt>classes</dt>');
    expect(seen(JSON.stringify({ outputs: [{ name: 'p', datatype: 'FP64', shape: [1, 2], data: [0.25, 0.75], parameters: { classes: 'no,yes' } }] }))).to.equal('p FP64 [1 × 2] 0.25 0.75 classes no,yes');
  });

  it('draws the named numbers of a JSON result as bars: contributions, probabilities by class', () => {
    const contributions = payload(JSON.stringify({ label: 'setosa', contributions: { petal_width: -0.5, petal_length: 1.25 } }), { charts: true }).text;
    expect(contributions).to.contain('<dt>label</dt><dd>setosa</dd>').and.contain('aria-label="contributions: petal_length 1.25, petal_width -0.5."');
    expect(contributions).to.contain('<rect class="bar negative"');
    const rows = payload(JSON.stringify({ predictions: [{ setosa: 0.9, versicolor: 0.1 }] }), { charts: true }).text;
    expect(rows).to.contain('aria-label="predictions: setosa 0.9, versicolor 0.1."');
    expect(payload('{"sepal_length":5.1,"sepal_width":3.5}', { charts: true }).text, 'plain fields stay fields').not.to.contain('<svg');
  });

  it('rounds to four decimals, four significant digits below one', () => {
    expect([numberText(3), numberText(5.123456), numberText(0.000123456), numberText(-2.5)]).to.deep.equal(['3', '5.1235', '0.0001235', '-2.5']);
  });
});
