import { expect } from 'chai';
import { Turns } from './turns.js';

describe('turns: waiting items handed out between workspaces', () => {
  it('serves the waiting workspace served longest ago, each workspace\'s items in order', () => {
    const turns = new Turns<string>(10);
    turns.serve(1); // workspace 1 just had one through without waiting
    for (const item of ['a1', 'a2', 'a3']) turns.push(1, item);
    turns.push(2, 'b1');
    turns.push(2, 'b2');
    turns.push(3, 'c1');
    expect(Array.from({ length: 7 }, () => turns.shift())).to.deep.equal(['b1', 'c1', 'a1', 'b2', 'a2', 'a3', undefined]);
  });

  it('refuses an item past its workspace\'s bound, never another workspace\'s', () => {
    const turns = new Turns<string>(2);
    expect([turns.push(1, 'a1'), turns.push(1, 'a2'), turns.push(1, 'a3'), turns.push(2, 'b1')]).to.deep.equal([true, true, false, true]);
    turns.remove(1, 'a1');
    expect(turns.push(1, 'a3')).to.equal(true);
    expect(turns.drain()).to.deep.equal(['a2', 'a3', 'b1']);
    expect(turns.shift()).to.equal(undefined);
  });
});
