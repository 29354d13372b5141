import { expect } from 'chai';
import { Slots } from './slots.js';

describe('executor slots', () => {
  it('lets at most `size` calls run at once, the rest in arrival order, and frees a slot on failure', async () => {
    const slots = new Slots(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const call = (n: number, fail = false) =>
      slots.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        order.push(n);
        if (fail) throw new Error('model failed');
        return n;
      });
    const results = await Promise.allSettled([call(1, true), call(2), call(3), call(4), call(5)]);
    expect(peak).to.equal(2);
    expect(order).to.deep.equal([1, 2, 3, 4, 5]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await slots.run(async () => 'free again')).to.equal('free again');
  });
});
