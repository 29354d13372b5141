import { expect } from 'chai';
import { MicroBatch } from './micro-batch.js';

describe('micro batch', () => {
  it('runs the calls of one event-loop turn as one batch, each caller getting its own output', async () => {
    const batches: number[][] = [];
    const batch = new MicroBatch<number, number>(async (items) => {
      batches.push(items);
      return items.map((n) => n * 10);
    });
    const outputs = await Promise.all([batch.add(1), batch.add(2), batch.add(3)]);
    expect(outputs).to.deep.equal([10, 20, 30]);
    expect(batches).to.deep.equal([[1, 2, 3]]);
    expect(await batch.add(4)).to.equal(40);
    expect(batches).to.have.length(2);
  });

  it('splits at the size limit and rejects every caller of a failed batch', async () => {
    const sizes: number[] = [];
    const batch = new MicroBatch<number, number>(async (items) => {
      sizes.push(items.length);
      if (items.includes(-1)) throw new Error('boom');
      return items;
    }, 2);
    const results = await Promise.allSettled([batch.add(1), batch.add(2), batch.add(-1), batch.add(4), batch.add(5)]);
    expect(sizes).to.deep.equal([2, 2, 1]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
  });
});
