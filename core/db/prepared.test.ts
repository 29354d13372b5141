import { expect } from 'chai';
import { sharedDatabase, usingPostgres } from '../../test/support/database.js';
import type { Db } from './database.js';
import { numbered, prepared } from './prepared.js';

const ECHO_SQL = 'select ?::int as n, ?::text as word, ?::timestamptz as at';

describe('prepared statements', () => {
  let db: Db;
  before(async () => {
    db = await sharedDatabase();
  });

  it("numbers knex's placeholders once per statement, and refuses the ones it cannot number", () => {
    expect(numbered('test.numbered', 'select ?::int, ? from t where a = ?')).to.equal('select $1::int, $2 from t where a = $3');
    expect(numbered('test.numbered', 'ignored: the text of a name is kept')).to.equal('select $1::int, $2 from t where a = $3');
    expect(() => numbered('test.escaped', 'select \\? from t')).to.throw(/not supported/);
    expect(() => numbered('test.identifier', 'select ?? from t')).to.throw(/not supported/);
  });

  it('runs with its bindings and answers its rows, in and out of a transaction', async () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    const { rows } = await prepared(db, 'test.echo', ECHO_SQL, [7, 'seven', at]);
    expect(rows).to.deep.equal([{ n: 7, word: 'seven', at }]);
    const inTransaction = await db.transaction((trx) => prepared(trx, 'test.echo', ECHO_SQL, [8, 'eight', at]));
    expect(inTransaction.rows).to.deep.equal([{ n: 8, word: 'eight', at }]);
  });

  it("on PostgreSQL: goes straight to a pooled connection, gives it back whatever happens, and keeps the database's error", async function () {
    if (!usingPostgres()) this.skip();
    const seen: string[] = [];
    const onQuery = (query: { sql?: string }) => seen.push(query.sql ?? '');
    db.on('query', onQuery);
    const pool = (db.client as { pool: { numUsed(): number } }).pool;
    try {
      await prepared(db, 'test.echo', ECHO_SQL, [1, 'one', new Date()]);
      const error = (await prepared(db, 'test.echo', ECHO_SQL, ['not a number', 'x', new Date()]).catch((e: unknown) => e)) as { code?: string };
      expect(error.code).to.equal('22P02'); // invalid_text_representation, as PostgreSQL said it
      expect(pool.numUsed()).to.equal(0);
      expect(seen).to.deep.equal([]); // knex never saw them
    } finally {
      db.off('query', onQuery);
    }
  });

  it('on PostgreSQL: in a transaction, runs on its connection (rolled back with it)', async function () {
    if (!usingPostgres()) this.skip();
    await db.raw('create table if not exists prepared_test (word text)');
    const rollback = new Error('roll back');
    await db
      .transaction(async (trx) => {
        await prepared(trx, 'test.insert', 'insert into prepared_test (word) values (?)', ['gone']);
        throw rollback;
      })
      .catch((e: unknown) => expect(e).to.equal(rollback));
    expect((await db.raw('select count(*)::int as n from prepared_test')).rows[0].n).to.equal(0);
    await db.raw('drop table prepared_test');
  });
});
