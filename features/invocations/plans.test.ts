import { expect } from 'chai';
import type { Knex } from 'knex';
import { queuedPredict, startIrisPlatform, type IrisPlatform } from '../../test/support/fixtures.js';
import { unique } from '../../test/support/platform.js';
import { CLAIM_SQL, COMPLETE_SQL, TRANSITIONS, invocationState, scans } from './state.js';
import { WORKLOAD_SQL } from './store.js';
import { CLAIM_LOCKS_SQL } from './claim-locks.js';

/** knex's `?` placeholders as PostgreSQL's `$1, $2…`, for PREPARE. */
const numbered = (sql: string) => {
  let count = 0;
  return sql.replace(/\?/g, () => `$${++count}`);
};

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(plan: Record<string, unknown>): Array<Record<string, unknown>> {
  const children = (plan.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [plan, ...children.flatMap(planNodes)];
}

/** CLAIM_SQL's bindings for its plans: claims of 16 under a minute's lease, holding no claim lock. */
const CLAIM_PARAMETERS = ['[]', 16, 16, 16, 16, TRANSITIONS.claim.to, 60000, JSON.stringify(TRANSITIONS.claim.from), 'plans'];

/** The indexes of invocations that the update of invocations in `plan` reads. */
function updateIndexes(plan: Array<Record<string, unknown>>): unknown[] {
  const update = plan.find((node) => node['Node Type'] === 'ModifyTable' && node['Relation Name'] === 'invocations')!;
  return planNodes(update).flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));
}

/** The scans of invocations in the plan of `statement`, which EXPLAIN plans without running it. */
async function invocationScans(db: Knex, statement: Knex.QueryBuilder): Promise<string[]> {
  const { sql, bindings } = statement.toSQL();
  const result = (await db.raw(`explain (format json) ${sql}`, bindings)) as { rows: Array<Record<string, unknown>> };
  const raw = result.rows[0]!['QUERY PLAN'];
  const [{ Plan: plan }] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: Record<string, unknown> }];
  return planNodes(plan)
    .filter((node) => node['Relation Name'] === 'invocations')
    .map((node) => node['Node Type'] as string);
}

describe('invocations: statements that run often, or once per row, never read the whole table', () => {
  let iris: IrisPlatform;
  let ids: string[];
  const version = unique('v');

  before(async () => {
    iris = await startIrisPlatform(version);
    const { t, owner, modelId } = iris;
    const db = t.platform.db;
    const sessionId = (await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: owner.token })).body.id as string;
    // A table in use, with statistics: mostly finished rows, a few queued and a few under leases that ran out.
    const rows = Array.from({ length: 3000 }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }));
    ids = (await invocationState.appendQueued(db, rows)).map((row) => row!.id);
    await db('invocations').whereIn('id', ids.slice(30)).update({ status: 'COMPLETED', completed_at: db.fn.now() });
    await db('invocations').whereIn('id', ids.slice(20, 30)).update({ status: 'IN_PROGRESS', lease_expires_at: db.fn.now() });
    await db.raw('analyze invocations');
  });
  after(async () => {
    // Test cleanup only: rows left QUEUED or IN_PROGRESS here would be run by the executors of later tests.
    await iris?.t.platform.db('invocations').whereIn('id', ids ?? []).delete();
    await iris?.close();
  });

  it('the sweeper finds the rows it looks for on every pass through an index', async () => {
    const db = iris.t.platform.db;
    // The statements themselves, built but never run: knex runs a query only when it is awaited.
    const statements: Record<string, Knex.QueryBuilder> = {
      // The update of `expire` (invocationState.expireLeases) reads the rows this selects.
      expiredLeases: scans.expiredLeases(db).select('id'),
    };
    for (const [name, statement] of Object.entries(statements)) {
      const scans = await invocationScans(db, statement);
      expect(scans, name).to.not.include('Seq Scan');
      expect(scans, name).to.have.length.greaterThan(0);
    }
  });

  /** The invocations scans of `sql`'s generic plan (the one every run uses once PostgreSQL settles, see `prepared`), with `parameters` as literals. */
  async function genericPlanScans(sql: string, parameters: Array<string | number>): Promise<string[]> {
    return (await genericPlan(sql, parameters)).filter((node) => node['Relation Name'] === 'invocations').map((node) => node['Node Type'] as string);
  }

  /** Every node of `sql`'s generic plan, with `parameters` as literals. */
  async function genericPlan(sql: string, parameters: Array<string | number>): Promise<Array<Record<string, unknown>>> {
    return iris.t.platform.db.transaction(async (trx) => {
      await trx.raw('set local plan_cache_mode = force_generic_plan');
      await trx.raw(`prepare plan_under_test as ${numbered(sql)}`);
      // EXPLAIN EXECUTE takes no bound parameters: the values go in as literals.
      const literals = parameters.map((value) => (typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`));
      const result = (await trx.raw(`explain (format json) execute plan_under_test${literals.length ? `(${literals.join(', ')})` : ''}`)) as { rows: Array<Record<string, unknown>> };
      await trx.raw('deallocate plan_under_test');
      const raw = result.rows[0]!['QUERY PLAN'];
      const [{ Plan: plan }] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: Record<string, unknown> }];
      return planNodes(plan);
    });
  }

  it("the executor's fair claim walks the queued and running rows through indexes on its generic plan", async () => {
    const scans = await genericPlanScans(CLAIM_SQL, CLAIM_PARAMETERS);
    expect(scans).to.not.include('Seq Scan');
    expect(scans).to.have.length.greaterThan(3);
  });

  it("the claim's locks read limited workspaces' queued and running rows through indexes on their generic plan", async () => {
    const scans = await genericPlanScans(CLAIM_LOCKS_SQL, [16]);
    expect(scans).to.not.include('Seq Scan');
    expect(scans).to.have.length.greaterThan(1);
  });

  /** Runs `work` with 3,000 more invocations queued in a session of their own, deleted afterwards. */
  async function withBacklog(work: (db: Knex) => Promise<void>): Promise<void> {
    const { t, owner, modelId } = iris;
    const db = t.platform.db;
    const sessionId = (await t.public.post(`/api/model/iris-classifier/version/${version}/session`, { token: owner.token })).body.id as string;
    const backlog = Array.from({ length: 3000 }, () => queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId }));
    const backlogIds = (await invocationState.appendQueued(db, backlog)).map((row) => row!.id);
    try {
      await work(db);
    } finally {
      await db('invocations').whereIn('id', backlogIds).delete();
      await db.raw('analyze invocations');
    }
  }

  it('the fair claim updates the rows it chose through the primary key, not among every queued row', async () => {
    // A backlog the statistics, taken when few rows were queued, do not know of yet: as a backlog's first claims see it.
    await withBacklog(async () => {
      expect(updateIndexes(await genericPlan(CLAIM_SQL, CLAIM_PARAMETERS))).to.deep.equal(['invocations_pkey']);
    });
  });

  it('the fair claim keeps to its indexes when much of the table is queued', async () => {
    // A backlog as large as the finished rows: a first QUEUED row then looks one page away, and a scan of the
    // heap in its order would walk every finished row before the backlog's first.
    await withBacklog(async (db) => {
      await db.raw('analyze invocations');
      expect(await genericPlanScans(CLAIM_SQL, CLAIM_PARAMETERS)).to.not.include('Seq Scan');
    });
  });

  it("the scrape's count of queued and running invocations per workspace reads only their partial indexes", async () => {
    const scans = await genericPlanScans(WORKLOAD_SQL, []);
    expect(scans).to.not.include('Seq Scan');
    expect(scans).to.have.length(2);
  });

  it("the executor's completions read invocations through the primary key on their generic plan", async () => {
    const plan = await genericPlan(COMPLETE_SQL, [JSON.stringify([{ id: ids[20], attempts: 1, response: '{}' }]), TRANSITIONS.complete.to, JSON.stringify(TRANSITIONS.complete.from), 'COMPLETED']);
    expect(updateIndexes(plan)).to.deep.equal(['invocations_pkey']);
  });

  it('ANALYZE keeps statistics of the columns statements filter on, none of the payloads', async () => {
    const db = iris.t.platform.db;
    const columns = ((await db.raw(`select attname from pg_stats where schemaname = current_schema() and tablename = 'invocations'`)) as { rows: Array<{ attname: string }> }).rows.map(
      (row) => row.attname,
    );
    expect(columns).to.include.members(['id', 'session_id', 'status', 'created_at']);
    expect(columns.filter((column) => ['body', 'response', 'error'].includes(column))).to.deep.equal([]);
  });

  it('deleting an invocation finds the explanations that point at it through an index', async () => {
    const db = iris.t.platform.db;
    // What the foreign key's ON DELETE SET NULL runs for every deleted invocation (a user's, removed with the user).
    const scans = await invocationScans(db, db('invocations').where({ related_to: ids[0] }).update({ related_to: null }));
    expect(scans).to.not.include('Seq Scan');
    expect(scans).to.have.length.greaterThan(0);
  });
});
