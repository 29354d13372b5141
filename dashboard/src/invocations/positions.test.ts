import { expect } from 'chai';
import { olderThanPage, shiftMicroseconds, type CreatedWindow } from './positions.js';

describe('dashboard positions of a page in a list', () => {
  // A newest-first list as the keyset orders it: creation time, then id, both descending.
  const rows = [
    { id: 'e', at: '2026-01-01T00:00:03.000000Z' },
    { id: 'd', at: '2026-01-01T00:00:02.000005Z' },
    { id: 'c', at: '2026-01-01T00:00:02.000005Z' },
    { id: 'b', at: '2026-01-01T00:00:02.000005Z' },
    { id: 'a', at: '2026-01-01T00:00:01.000000Z' },
  ];
  const reads: CreatedWindow[] = [];
  async function read(window: CreatedWindow & { limit: number }) {
    reads.push(window);
    const items = rows.filter((row) => (!window.createdAfter || row.at > window.createdAfter) && (!window.createdBefore || row.at < window.createdBefore));
    return { total: items.length, items: items.slice(0, window.limit) };
  }

  it('counts nothing older than the last page, and reads nothing for it', async () => {
    reads.length = 0;
    expect(await olderThanPage(undefined, read)).to.equal(0);
    expect(reads).to.deep.equal([]);
  });

  it('counts the rows created before the page ends, and those of the same microsecond further down the list', async () => {
    expect(await olderThanPage({ at: rows[0]!.at, id: 'e' }, read)).to.equal(4);
    expect(await olderThanPage({ at: rows[1]!.at, id: 'd' }, read)).to.equal(3);
    expect(await olderThanPage({ at: rows[2]!.at, id: 'c' }, read)).to.equal(2);
    expect(await olderThanPage({ at: rows[3]!.at, id: 'b' }, read)).to.equal(1);
  });

  it('moves a time by microseconds across seconds', () => {
    expect(shiftMicroseconds('2026-01-01T00:00:02.000005Z', 1)).to.equal('2026-01-01T00:00:02.000006Z');
    expect(shiftMicroseconds('2026-01-01T00:00:02.000000Z', -1)).to.equal('2026-01-01T00:00:01.999999Z');
    expect(shiftMicroseconds('2025-12-31T23:59:59.999999Z', 1)).to.equal('2026-01-01T00:00:00.000000Z');
  });
});
