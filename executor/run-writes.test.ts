import { expect } from 'chai';
import type { Knex } from 'knex';
import { unique, type TestPlatform } from '../test/support/platform.js';
import { queuedPredict, startIrisSession, type IrisSession, type Tenant } from '../test/support/fixtures.js';
import { invocationsStore, type InvocationRow } from '../features/invocations/store.js';
import { RunWrites } from './run-writes.js';
import { sharedDatabaseUrl } from '../test/support/database.js';
import { needsPostgres } from '../test/support/skips.js';
import { COMPLETE_SQL, invocationState } from '../features/invocations/state.js';
import { createDatabase, type Db } from '../infra/db/database.js';

describe('executor run writes: the claims, and the completions, of concurrent runs in one statement each', () => {
  let iris: IrisSession;
  let t: TestPlatform;
  let owner: Tenant;
  let sessionId: string;
  let modelId: number;
  const version = unique('v');

  before(async () => {
    iris = await startIrisSession(version);
    ({ t, owner, modelId, sessionId } = iris);
  });
  after(async () => {
    // Test cleanup only: rows left QUEUED here would be run by the executors of later tests.
    await iris?.t.platform.db('invocations').where({ session_id: sessionId }).delete();
    await iris?.close();
  });

  const queue = async (n: number, db: Db = t.platform.db): Promise<string[]> => {
    const rows = Array.from({ length: n }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }));
    return (await invocationState.appendQueued(db, rows)).map((row) => row!.id);
  };
  const claimed = async (writes: RunWrites) => {
    const claim = await writes.claim();
    return claim.row;
  };
  const stored = async (id: string) => (await invocationsStore.byId(t.platform.db, id)) as InvocationRow;

  beforeEach(async () => {
    // Test setup only: a claim takes any workspace's queued work, and earlier tests of this process may have left some.
    await t.platform.db('invocations').whereIn('status', ['QUEUED', 'IN_PROGRESS']).delete();
  });

  it('claims a burst of deliveries in one statement: each row once, and a delivery with nothing left gets nothing', async () => {
    const writes = new RunWrites(t.platform.db, 60_000);
    const ids = await queue(3);
    const claims = await Promise.all([1, 2, 3, 4].map(() => writes.claim()));
    expect(claims.slice(0, 3).map((claim) => claim.row?.id)).to.have.members(ids);
    expect(claims[3]).to.deep.equal({ waiting: false });
    for (const claim of claims.slice(0, 3)) expect(claim.row).to.include({ status: 'IN_PROGRESS', attempts: 1 });
    expect(claims[0]!.row!.started_at).to.be.instanceOf(Date);
    // Claimed rows are held under a live lease: a later claim gets nothing.
    expect(await writes.claim()).to.deep.equal({ waiting: false });
  });

  it('completes the runs that finish together in one statement, and refuses a completion under another lease', async () => {
    const writes = new RunWrites(t.platform.db, 60_000);
    const [a, b] = await queue(2);
    const rowA = (await claimed(writes))!;
    const rowB = (await claimed(writes))!;
    const [doneA, doneStale] = await Promise.all([writes.complete(rowA, '{"ok":1}'), writes.complete({ ...rowB, attempts: rowB.attempts + 5 }, 'lost')]);
    expect(doneA).to.equal(true);
    expect(doneStale, 'a completion under another claim').to.equal(false);
    expect(await stored(rowA.id)).to.include({ status: 'COMPLETED', response: '{"ok":1}', lease_expires_at: null });
    expect((await stored(rowA.id)).completed_at).to.be.instanceOf(Date);
    expect(await stored(rowB.id)).to.include({ status: 'IN_PROGRESS', attempts: 1 });
    expect([rowA.id, rowB.id]).to.have.members([a!, b!]);
  });

  it('refuses the completion of a run whose lease ran out and was taken over: the takeover holds the row', async () => {
    const writes = new RunWrites(t.platform.db, 60_000);
    const [id] = await queue(1);
    const first = (await claimed(writes))!;
    await t.platform.db('invocations').where({ id }).update({ lease_expires_at: new Date(Date.now() - 1000) });
    await invocationState.expireLeases(t.platform.db);
    const takeover = (await claimed(writes))!;
    expect(takeover).to.include({ id, status: 'IN_PROGRESS', attempts: 2 });
    expect(await writes.complete(first, 'late')).to.equal(false);
    expect(await stored(id!)).to.include({ status: 'IN_PROGRESS', attempts: 2 });
  });

  it('runs a statement again when PostgreSQL rolled it back to break a deadlock, three times at most', async () => {
    const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
    let failures = 0;
    let statements = 0;
    // Counts the completion's statements only: the same transaction also looks for webhook deliveries to queue.
    const victim = (sql: unknown) => {
      if (sql !== COMPLETE_SQL) return false;
      statements++;
      return failures-- > 0;
    };
    // The database, but its next `failures` statements are deadlock victims, in its transactions too.
    const failing = <T extends Db | Knex.Transaction>(runner: T): T =>
      new Proxy(runner, {
        get: (target, key) => {
          if (key === 'transaction') return (work: (trx: Knex.Transaction) => Promise<unknown>) => target.transaction((trx) => work(failing(trx)));
          if (key !== 'raw') return Reflect.get(target, key);
          return (...args: Parameters<Db['raw']>) => (victim(args[0]) ? { options: () => Promise.reject(deadlock()) } : target.raw(...args));
        },
      });
    const db = failing(t.platform.db);
    const writes = new RunWrites(db, 60_000);
    await queue(2);
    const first = (await claimed(new RunWrites(t.platform.db, 60_000)))!;
    const second = (await claimed(new RunWrites(t.platform.db, 60_000)))!;
    failures = 2;
    expect(await writes.complete(first, '{"ok":1}')).to.equal(true);
    expect(statements).to.equal(3);
    failures = 3;
    statements = 0;
    const refused = await writes.complete(second, '{"ok":1}').then(() => undefined, (error: Error) => error);
    expect(refused?.message).to.equal('deadlock detected');
    expect(statements).to.equal(3);
    expect(await stored(second.id)).to.include({ status: 'IN_PROGRESS' });
  });

  it('runs its hot statements on generic plans: PostgreSQL plans each once per connection, not on every run', async function () {
    needsPostgres(this, 'PGlite prepares nothing by name');
    // With statistics of a table in use, a custom plan that can see the size of a list looks cheaper than the
    // generic plan, and PostgreSQL keeps planning the statement anew: a third of its CPU on the executor's drain.
    await queue(3000);
    await t.platform.db.raw('analyze invocations');
    const db = createDatabase({ url: await sharedDatabaseUrl(), poolMax: 1 }); // one connection: the one that prepares them
    try {
      for (let run = 0; run < 12; run++) {
        const writes = new RunWrites(db, 60_000);
        const ids = await queue(1 + (run % 3), db);
        const runs = await Promise.all(ids.map(() => claimed(writes)));
        await Promise.all(runs.map((row) => writes.complete(row!, '{"ok":1}')));
        await invocationsStore.inSessionsOfUsers(db, ids.map((id) => ({ sessionId, modelId, userId: owner.user.id, id })));
      }
      const plans = (await db.raw('select name, generic_plans, custom_plans from pg_prepared_statements order by name')).rows as Array<{ name: string; generic_plans: string; custom_plans: string }>;
      expect(plans.map((plan) => plan.name)).to.include.members(['invocations.append', 'invocations.read', 'invocations.claim', 'invocations.complete']);
      for (const plan of plans) expect(Number(plan.generic_plans), `${plan.name}: ${plan.custom_plans} custom plans`).to.be.greaterThan(0);
    } finally {
      await db.destroy();
    }
  });

  it('keeps running its prepared statements when a migration adds a column to invocations under it', async function () {
    needsPostgres(this, 'PGlite prepares nothing by name');
    const db = createDatabase({ url: await sharedDatabaseUrl(), poolMax: 1 }); // one connection: the one that prepared them
    const runAll = async () => {
      const writes = new RunWrites(db, 60_000);
      const [, second] = await queue(2, db);
      const run = (await claimed(writes))!;
      expect(await writes.complete(run, '{"ok":1}')).to.equal(true);
      const [read] = await invocationsStore.inSessionsOfUsers(db, [{ sessionId, modelId, userId: owner.user.id, id: second! }]);
      return read?.invocation;
    };
    try {
      await runAll();
      await t.platform.db.raw('alter table invocations add column added_later text');
      const read = await runAll();
      expect(read).to.not.have.property('added_later');
    } finally {
      await t.platform.db.raw('alter table invocations drop column if exists added_later');
      await db.destroy();
    }
  });
});
