import { expect } from 'chai';
import type { Knex } from 'knex';
import { createDatabase, type Db } from '../../infra/db/database.js';
import { sharedDatabaseUrl } from '../../test/support/database.js';
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js';
import { needsPostgres } from '../../test/support/skips.js';
import { until } from '../../test/support/until.js';
import { databasePoolRegistry } from './pool-metrics.js';

/** One unlabelled (or `state`-labelled) figure of a scrape; NaN when absent. */
const figure = (text: string, series: string) => {
  const escaped = series.replace(/[{}"+.]/g, (c) => `\\${c}`);
  return Number(new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
};

describe('connection pool figures on /metrics', () => {
  let db: Db;
  let t: TestPlatform;
  const held: Knex.Transaction[] = [];

  after(async () => {
    for (const trx of held) await trx.rollback().catch(() => undefined);
    await t?.close();
    await db?.destroy();
  });

  it('shows both connections of a pool of 2 used and a third query waiting, then nothing waiting once they are released', async function () {
    needsPostgres(this, 'PGlite has no connection pool');
    db = createDatabase({ url: await sharedDatabaseUrl(), poolMax: 2 });
    t = await startTestPlatform({}, undefined, { db });
    const scrape = async () => {
      const reply = await t.auth.get('/metrics');
      expect(reply.status).to.equal(200);
      return reply.text;
    };
    const before = await scrape();
    expect(figure(before, 'didyma_db_pool_max')).to.equal(2);
    const waitsBefore = figure(before, 'didyma_db_pool_acquire_wait_seconds_sum');

    held.push(await db.transaction(), await db.transaction());
    await Promise.all(held.map((trx) => trx.raw('select 1')));
    const third = db.raw('select 3 as n');
    let saturated = '';
    await until(async () => figure((saturated = await scrape()), 'didyma_db_pool_pending_acquires') >= 1, 'the third query waiting for a connection');
    // The third query asked for its connection before that scrape: it has waited at least from here to the release.
    const waitingSince = process.hrtime.bigint();
    expect(figure(saturated, 'didyma_db_pool_connections{state="used"}')).to.equal(2);
    expect(figure(saturated, 'didyma_db_pool_connections{state="free"}')).to.equal(0);

    const releasedAt = process.hrtime.bigint();
    for (const trx of held.splice(0)) await trx.commit();
    expect(((await third) as { rows: { n: number }[] }).rows[0]!.n).to.equal(3);
    let after = '';
    await until(async () => figure((after = await scrape()), 'didyma_db_pool_pending_acquires') === 0, 'no query waiting for a connection');
    expect(figure(after, 'didyma_db_pool_connections{state="used"}') + figure(after, 'didyma_db_pool_connections{state="free"}')).to.be.within(1, 2);
    expect(figure(after, 'didyma_db_pool_acquire_wait_seconds_sum') - waitsBefore).to.be.at.least(Number(releasedAt - waitingSince) / 1e9);
  });

  it('shows no pool figures for the embedded PGlite, whose single connection is no pool to size', async () => {
    const embedded = createDatabase({});
    try {
      expect(databasePoolRegistry(embedded)).to.equal(undefined);
    } finally {
      await embedded.destroy();
    }
  });
});
