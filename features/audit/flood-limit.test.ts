import { expect } from 'chai';
import { FloodLimit } from './flood-limit.js';

describe('audit flood limit', () => {
  it('keeps the limit per key and minute, and hands the dropped count to the next record kept', () => {
    let now = 0;
    const limit = new FloodLimit(2, () => now);
    expect([limit.admit('a'), limit.admit('a'), limit.admit('a'), limit.admit('a'), limit.admit('b')]).to.deep.equal([0, 0, undefined, undefined, 0]);
    now += 60_000;
    expect([limit.admit('a'), limit.admit('a')]).to.deep.equal([2, 0]);
    expect(limit.droppedTotal).to.equal(2);
  });
});
