import { expect } from 'chai';
import { MicroBatch, eachAlone, rejectItem } from './micro-batch.js';

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
    }, { maxItems: 2 });
    const results = await Promise.allSettled([batch.add(1), batch.add(2), batch.add(-1), batch.add(4), batch.add(5)]);
    expect(sizes).to.deep.equal([2, 2, 1]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
  });

  it('holds calls while maxInFlight batches run, then sends them together', async () => {
    const sizes: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batch = new MicroBatch<number, number>(
      async (items) => {
        sizes.push(items.length);
        if (sizes.length === 1) await gate;
        return items;
      },
      { maxInFlight: 1 },
    );
    const first = batch.add(0);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [1, 2, 3].map((n) => batch.add(n));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sizes).to.deep.equal([1]);
    release();
    expect(await Promise.all([first, ...later])).to.deep.equal([0, 1, 2, 3]);
    expect(sizes).to.deep.equal([1, 3]);
  });

  it('gathers for gatherMs before a batch runs, and drain runs what is pending at once', async () => {
    const batches: number[][] = [];
    const batch = new MicroBatch<number, number>(async (items) => (batches.push(items), items), { gatherMs: 30 });
    const first = batch.add(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = batch.add(2);
    expect(batches).to.deep.equal([]);
    expect(await Promise.all([first, second])).to.deep.equal([1, 2]);
    expect(batches).to.deep.equal([[1, 2]]);
    const pending = batch.add(3);
    await batch.drain();
    expect(batches).to.deep.equal([[1, 2], [3]]);
    expect(await pending).to.equal(3);
  });

  it('fails only the item whose output is rejected, and eachAlone isolates a bad item', async () => {
    const batch = new MicroBatch<number, number>(async (items) => items.map((n) => (n < 0 ? rejectItem(new Error(`bad ${n}`)) : n)));
    const results = await Promise.allSettled([batch.add(1), batch.add(-2), batch.add(3)]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    const alone = await eachAlone([1, -1, 2], async (n) => {
      if (n < 0) throw new Error('refused');
      return n * 2;
    });
    expect(alone[0]).to.equal(2);
    expect(alone[2]).to.equal(4);
    expect((alone[1] as { error: Error }).error.message).to.equal('refused');
  });
});
