import { expect } from 'chai';
import { HeldUntilScraped } from './held-until-scraped.js';

describe('updates held until a scrape has read their series at zero', () => {
  it('runs the updates of a held series at the second scrape after it was made, and others at once', () => {
    const held = new HeldUntilScraped();
    const done: string[] = [];
    held.hold('new');
    held.apply('new', () => done.push('new 1'));
    held.apply('known', () => done.push('known'));
    expect(done).to.deep.equal(['known']);
    held.scraped(); // reads 'new' at zero
    held.apply('new', () => done.push('new 2'));
    expect(done).to.deep.equal(['known']);
    held.scraped();
    expect(done).to.deep.equal(['known', 'new 1', 'new 2']);
    held.apply('new', () => done.push('new 3'));
    expect(done.at(-1)).to.equal('new 3');
  });

  it('lets the updates through when nothing scrapes, rather than keep more than its bound', () => {
    const held = new HeldUntilScraped(3);
    let count = 0;
    held.hold('k');
    for (let i = 0; i < 3; i++) held.apply('k', () => (count += 1));
    expect(count).to.equal(3);
    held.apply('k', () => (count += 1));
    expect(count).to.equal(4);
  });
});
