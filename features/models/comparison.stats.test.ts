import { expect } from 'chai';
import { meanInterval, studentT975, wilsonInterval } from './comparison.stats.js';
import { canonicalJson, feedbackMetrics } from './feedback-metrics.js';

describe('comparison intervals', () => {
  it('gives the Wilson interval of a rate, clamped to [0, 1], and none without trials', () => {
    // 3 of 4 and 0 of 10 at z = 1.96, from the published formula by hand.
    expect(wilsonInterval(3, 4)!.low).to.be.closeTo(0.30064, 1e-5);
    expect(wilsonInterval(3, 4)!.high).to.be.closeTo(0.95441, 1e-5);
    expect(wilsonInterval(0, 10)).to.deep.include({ low: 0 });
    expect(wilsonInterval(0, 10)!.high).to.be.closeTo(0.27753, 1e-5);
    expect(wilsonInterval(0, 0)).to.equal(null);
  });

  it("takes Student's t quantile from the table and close to it beyond", () => {
    expect(studentT975(1)).to.equal(12.706205);
    expect(studentT975(30)).to.equal(2.042272);
    expect(studentT975(31)).to.be.closeTo(2.039513, 1e-5);
    expect(studentT975(60)).to.be.closeTo(2.000298, 1e-5);
    expect(studentT975(1000)).to.be.closeTo(1.962339, 1e-5);
  });

  it('gives a t interval of a mean from 2 values on', () => {
    expect(meanInterval(4, 1, 1)).to.equal(null);
    const interval = meanInterval(10, 2, 5)!;
    expect(interval.method).to.equal('student-t');
    expect(interval.high - 10).to.be.closeTo((2.776445 * 2) / Math.sqrt(5), 1e-9);
  });
});

describe('feedback metrics of a schema', () => {
  it('keeps booleans, numbers and enums in the schema order, with a nullable type as its other type', () => {
    const schema = {
      type: 'object',
      properties: { note: { type: 'string' }, ok: { type: ['boolean', 'null'] }, stars: { type: 'integer' }, kind: { enum: ['a', 1] }, both: { type: ['number', 'string'] } },
    };
    expect(feedbackMetrics(schema)).to.deep.equal([
      { name: 'ok', kind: 'boolean' },
      { name: 'stars', kind: 'number' },
      { name: 'kind', kind: 'enum', values: ['a', 1] },
    ]);
    expect(feedbackMetrics(null)).to.deep.equal([]);
    expect(feedbackMetrics({ type: 'string' })).to.deep.equal([]);
  });

  it('matches a value whatever its key order', () => {
    expect(canonicalJson({ b: 1, a: [true, { d: null, c: 'x' }] })).to.equal(canonicalJson({ a: [true, { c: 'x', d: null }], b: 1 }));
  });
});
