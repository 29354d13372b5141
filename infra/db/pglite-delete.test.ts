import { expect } from 'chai';
import { createDatabase } from './database.js';

describe('the embedded PGlite answers a DELETE as PostgreSQL does', () => {
  it('with the number of rows removed, 0 when none matched', async () => {
    const db = createDatabase({ url: undefined });
    try {
      await db.raw('create table removable (id integer)');
      await db('removable').insert([{ id: 1 }, { id: 2 }, { id: 3 }]);
      expect(await db('removable').where({ id: 9 }).delete()).to.equal(0);
      expect(await db('removable').where('id', '<', 3).delete()).to.equal(2);
      expect(await db('removable').where({ id: 3 }).delete().returning('id')).to.deep.equal([{ id: 3 }]);
    } finally {
      await db.destroy();
    }
  });
});
