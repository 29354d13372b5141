import { expect } from 'chai';
import { ownDatabase } from '../../test/support/database.js';
import { migrateLatest, type Db } from './database.js';

const recordedMigrations = async (db: Db) => Number((await db('knex_migrations').count('* as n'))[0]?.n);

describe('migrations under the lock of another run', () => {
  it('wait for the run holding the lock to finish, then apply nothing twice', async () => {
    const { db, drop } = await ownDatabase();
    try {
      const recorded = await recordedMigrations(db);
      // Another run's lock, as a migration outside a transaction holds it.
      await db('knex_migrations_lock').update({ is_locked: 1 });
      let waits = 0;
      const applied = await migrateLatest(db, {
        onLocked: async () => {
          waits += 1;
          await db('knex_migrations_lock').update({ is_locked: 0 });
        },
      });
      expect({ applied, waits }).to.deep.equal({ applied: [], waits: 1 });
      expect(await recordedMigrations(db)).to.equal(recorded);
      expect((await db('knex_migrations_lock').first('is_locked')).is_locked).to.equal(0);
    } finally {
      await drop();
    }
  });

  it('fail, naming the lock, once it has waited as long as it may', async () => {
    const { db, drop } = await ownDatabase();
    try {
      await db('knex_migrations_lock').update({ is_locked: 1 });
      const error = await migrateLatest(db, { lockWaitMs: 0 }).then(() => undefined, (e: Error) => e);
      expect(error?.name).to.equal('MigrationLocked');
    } finally {
      await drop();
    }
  });
});
