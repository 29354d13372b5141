import { expect } from 'chai';
import { ChangeFeed } from './change-feed.js';
import { ReadCache } from './read-cache.js';

describe('read cache', () => {
  let feed: ChangeFeed;
  let reads: number;
  let value: string;
  const load = async () => {
    reads += 1;
    return value;
  };

  beforeEach(() => {
    feed = new ChangeFeed();
    feed.setListening(true);
    reads = 0;
    value = 'v1';
  });

  it('serves a value again until a table of its topic changes', async () => {
    const cache = new ReadCache<string>(feed, 'identity', { maxEntries: 10, maxAgeMs: 60_000 });
    expect(await cache.get('k', load)).to.equal('v1');
    expect(await cache.get('k', load)).to.equal('v1');
    expect(reads).to.equal(1);
    value = 'v2';
    feed.tableChanged('models'); // another topic: still cached
    expect(await cache.get('k', load)).to.equal('v1');
    feed.tableChanged('memberships');
    expect(await cache.get('k', load)).to.equal('v2');
    expect(reads).to.equal(2);
  });

  it('does not keep a value read while a change happened', async () => {
    const cache = new ReadCache<string>(feed, 'identity', { maxEntries: 10, maxAgeMs: 60_000 });
    await cache.get('k', async () => {
      feed.tableChanged('users'); // the change lands between the read and its storing
      reads += 1;
      return 'old';
    });
    value = 'new';
    expect(await cache.get('k', load)).to.equal('new');
    expect(reads).to.equal(2);
  });

  it('reads through while notifications are not arriving, and starts afresh when they resume', async () => {
    const cache = new ReadCache<string>(feed, 'identity', { maxEntries: 10, maxAgeMs: 60_000 });
    await cache.get('k', load);
    feed.setListening(false);
    value = 'v2';
    expect(await cache.get('k', load)).to.equal('v2');
    expect(await cache.get('k', load)).to.equal('v2');
    expect(reads).to.equal(3);
    feed.setListening(true);
    value = 'v3';
    expect(await cache.get('k', load)).to.equal('v3');
  });

  it('bounds its size and the age of entries', async () => {
    let now = Date.UTC(2026, 0, 1);
    const cache = new ReadCache<string>(feed, 'identity', { maxEntries: 2, maxAgeMs: 1000, now: () => now });
    for (const key of ['a', 'b', 'c']) await cache.get(key, load);
    await cache.get('a', load); // evicted as the oldest: read again
    expect(reads).to.equal(4);
    await cache.get('c', load);
    expect(reads).to.equal(4);
    now += 1000;
    await cache.get('c', load);
    expect(reads).to.equal(4);
    now += 1;
    await cache.get('c', load);
    expect(reads).to.equal(5);
  });

  it('evicts the entry read least recently, not the one stored first', async () => {
    const cache = new ReadCache<string>(feed, 'identity', { maxEntries: 2, maxAgeMs: 60_000 });
    await cache.get('a', load);
    await cache.get('b', load);
    await cache.get('a', load); // a hit: a is now the most recent
    await cache.get('c', load); // evicts b
    expect(reads).to.equal(3);
    await cache.get('a', load);
    expect(reads).to.equal(3);
    await cache.get('b', load);
    expect(reads).to.equal(4);
  });
});
