import { expect } from 'chai';
import { sharedDatabase } from '../../test/support/database.js';
import { unique } from '../../test/support/platform.js';
import { keysetPage, type Cursor } from './keyset.js';
import { decodeCursor, encodeCursor } from '../http/pagination.js';

describe('keyset pages', () => {
  it('walks rows created within one millisecond, and at one instant, without skipping or repeating any', async () => {
    const db = await sharedDatabase();
    const prefix = unique('keyset');
    // Microseconds apart, and two at the very same instant (one transaction's now()).
    const instants = ['2031-01-01T00:00:00.000100Z', '2031-01-01T00:00:00.000200Z', '2031-01-01T00:00:00.000900Z', '2031-01-01T00:00:00.000900Z'];
    const ids: number[] = [];
    for (const [i, at] of instants.entries()) ids.push(((await db('workspaces').insert({ name: `${prefix}-${i}`, disabled: false, created_at: at }).returning('id'))[0] as { id: number }).id);
    const list = () => db('workspaces').where('name', 'like', `${prefix}-%`);

    const walked: number[] = [];
    let after: Cursor | undefined;
    do {
      const page = await keysetPage<{ id: number }>(list(), { limit: 1, offset: 0, ...(after && { after }) }, { table: 'workspaces', idType: 'integer' });
      expect(page.total).to.equal(4);
      walked.push(...page.rows.map((row) => row.id));
      // Through the same text a client carries.
      after = page.next && decodeCursor(encodeCursor(page.next));
    } while (after);
    expect(walked).to.deep.equal([ids[3], ids[2], ids[1], ids[0]]);
  });

  it('refuses a cursor whose id is not of the list\'s type', async () => {
    const db = await sharedDatabase();
    const uuidCursor = { at: '2031-01-01T00:00:00.000000Z', id: '00000000-0000-4000-8000-000000000000' };
    const refused = await keysetPage(db('workspaces'), { limit: 1, offset: 0, after: uuidCursor }, { table: 'workspaces', idType: 'integer' }).catch((error: Error) => error);
    expect(refused).to.be.instanceOf(Error).and.to.include({ status: 400 });
    const beyondIntegers = await keysetPage(db('workspaces'), { limit: 1, offset: 0, after: { ...uuidCursor, id: 2 ** 40 } }, { table: 'workspaces', idType: 'integer' }).catch((error: Error) => error);
    expect(beyondIntegers).to.be.instanceOf(Error).and.to.include({ status: 400 });
  });

  it('decodes only what it encodes', () => {
    const cursor = { at: '2031-01-01T00:00:00.000100Z', id: 7 };
    expect(decodeCursor(encodeCursor(cursor))).to.deep.equal(cursor);
    for (const text of ['', 'e30', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["2031-01-01T00:00:00Z",1]').toString('base64url'), Buffer.from('["2031-01-01T00:00:00.000100Z",-1]').toString('base64url'), Buffer.from('["1900-01-01T00:00:00.000000Z",1]').toString('base64url')]) {
      expect(() => decodeCursor(text), text).to.throw(/^after: /);
    }
  });
});
