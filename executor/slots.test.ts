import { expect } from 'chai';
import { Slots } from './slots.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('executor slots', () => {
  it('lets at most `size` calls run at once, the rest in arrival order, and frees a slot on failure', async () => {
    const slots = new Slots(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const call = (n: number, fail = false) =>
      slots.run({ key: 1, weight: 1, priority: 0 }, async () => {
        running += 1;
        peak = Math.max(peak, running);
        await tick();
        running -= 1;
        order.push(n);
        if (fail) throw new Error('model failed');
        return n;
      });
    const results = await Promise.allSettled([call(1, true), call(2), call(3), call(4), call(5)]);
    expect(peak).to.equal(2);
    expect(order).to.deep.equal([1, 2, 3, 4, 5]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await slots.run({ key: 1, weight: 1, priority: 0 }, async () => 'free again')).to.equal('free again');
  });

  it('gives a freed slot to a workspace with nothing running before the runs another claimed ahead, each workspace in its order', async () => {
    const slots = new Slots(2);
    const started: string[] = [];
    const call = (workspace: number, name: string) =>
      slots.run({ key: workspace, weight: 1, priority: 0 }, async () => {
        started.push(name);
        await tick();
      });
    // Workspace 1 fills both slots and has four more waiting; workspace 2's one run arrives last.
    const calls = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((name) => call(1, name));
    calls.push(call(2, 'b1'));
    await Promise.all(calls);
    expect(started).to.deep.equal(['a1', 'a2', 'b1', 'a3', 'a4', 'a5', 'a6']);
  });

  it("gives a workspace's freed slot to its run of the highest priority, the earliest among equals", async () => {
    const slots = new Slots(1);
    const started: string[] = [];
    const call = (priority: number, name: string) =>
      slots.run({ key: 1, weight: 1, priority }, async () => {
        started.push(name);
        await tick();
      });
    // The first takes the slot; the others were claimed ahead in this order, the urgent one last.
    await Promise.all([call(5, 'first'), call(5, 'low-1'), call(5, 'low-2'), call(9, 'urgent-1'), call(9, 'urgent-2')]);
    expect(started).to.deep.equal(['first', 'urgent-1', 'urgent-2', 'low-1', 'low-2']);
  });

  it('shares the slots between runs claimed ahead in proportion to their workspaces\' weights', async () => {
    const slots = new Slots(2);
    const started: string[] = [];
    const call = (key: number, weight: number, name: string) =>
      slots.run({ key, weight, priority: 0 }, async () => {
        started.push(name);
        await tick();
      });
    // Both workspaces have eight runs claimed ahead, the light one's first; the heavy one weighs three times as much.
    const calls = Array.from({ length: 8 }, (_, i) => [call(2, 1, `l${i}`), call(1, 3, `h${i}`)]).flat();
    await Promise.all(calls);
    const firstTen = started.slice(0, 10);
    expect(firstTen.filter((name) => name.startsWith('h')).length / firstTen.filter((name) => name.startsWith('l')).length).to.be.within(2, 4);
  });
});
