import { expect } from 'chai';
import { excerptOf } from './excerpt.js';

describe('excerptOf', () => {
  it('prefers the message field of a JSON error, with its code', () => {
    const body = JSON.stringify({ error_code: 'INVALID_PARAMETER_VALUE', message: `Model is missing inputs ['petal length (cm)']. ${'x'.repeat(50)}` });
    expect(excerptOf(body, undefined)).to.match(/^INVALID_PARAMETER_VALUE: Model is missing inputs/);
    expect(excerptOf(JSON.stringify({ detail: 'Not found' }), undefined)).to.equal('Not found');
  });

  it('keeps the last line of a Python traceback', () => {
    const trace = 'Traceback (most recent call last):\n  File "/srv/app.py", line 1\nValueError: X has 2 features, but the model expects 4';
    expect(excerptOf(trace, undefined)).to.equal('ValueError: X has 2 features, but the model expects 4');
  });

  it('keeps the beginning and the end of a long body, and never the token', () => {
    const long = `start ${'a'.repeat(1000)} secret-token end-reason`;
    const excerpt = excerptOf(long, 'secret-token');
    expect(excerpt).to.match(/^start/).and.match(/end-reason$/);
    expect(excerpt).to.not.include('secret-token');
    expect(excerpt.length).to.be.below(320);
  });
});
