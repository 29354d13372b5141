import crypto from 'node:crypto';
import { expect } from 'chai';
import { startTestPlatform, unique, type TestPlatform } from '../test/support/platform.js';
import { queuedPredict, startStillIrisSession } from '../test/support/fixtures.js';
import { needsPostgres } from '../test/support/skips.js';
import { until } from '../test/support/until.js';
import { invocationState } from '../features/invocations/state.js';
import { invocationsStore } from '../features/invocations/store.js';
import type { Db } from '../infra/db/database.js';

const TASKS = ['invocation_sweeper', 'idempotency_key_purge', 'invocation_event_purge', 'webhook_delivery_purge', 'audit_record_purge', 'webhook_deliverer', 'alias_guard_evaluation'];

/** How many backends wait on a lock `holder` holds. */
async function waitingOn(db: Db, holder: number): Promise<number> {
  const waiting = await db.raw('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [holder]);
  return (waiting.rows[0] as { n: number }).n;
}

describe('the platform’s background tasks', () => {
  it('run each under its own name, counted on /metrics', async () => {
    const t = await startTestPlatform();
    try {
      const runs = async () => (await t.public.get('/metrics')).text;
      await until(async () => /didyma_background_task_runs_total\{task="invocation_sweeper"\} [1-9]/.test(await runs()), 'a counted sweep');
      const text = await runs();
      for (const task of TASKS) expect(text, task).to.include(`didyma_background_task_failures_total{task="${task}"}`);
    } finally {
      await t.close();
    }
    expect(t.platform.shutdown.closing.pending()).to.deep.equal([]);
  });

  it('count on /metrics every run the sweeper returns to the queue when its lease ran out', async () => {
    // A platform that sweeps only when told: other lanes' platforms may sweep this row first, so a pass's count is what is compared.
    const iris = await startStillIrisSession(unique('v'));
    try {
      const { t, owner, modelId, sessionId } = iris;
      const expired = async () => Number(/^didyma_invocation_leases_expired_total (\d+)$/m.exec((await t.public.get('/metrics')).text)?.[1]);
      const before = await expired();
      let returned = 0;
      await until(async () => {
        const [row] = await invocationState.appendQueued(t.platform.db, [queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId })]);
        // Test setup only: a run whose executor vanished, its lease run out.
        await t.platform.db('invocations').where({ id: row!.id }).update({ status: 'IN_PROGRESS', attempts: 1, lease_expires_at: new Date(Date.now() - 1000) });
        returned += await t.platform.sweeper.runOnce();
        return returned > 0;
      }, 'a sweep of this platform returning a run');
      expect(await expired()).to.equal(before + returned);
      expect((await t.private.get('/metrics')).text, 'every server of a process that sweeps shows the figure').to.match(/^didyma_invocation_leases_expired_total \d+$/m);
    } finally {
      await iris.close();
    }
  });

  /**
   * Starts a task `name` whose run waits until the platform closes, then ends
   * with `ending`; resolves once the platform's close has resolved.
   */
  async function closeDuringRun(t: TestPlatform, name: string, ending: () => void = () => undefined): Promise<void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let running = false;
    t.platform.scheduler
      .add({
        name,
        intervalMs: 3_600_000,
        run: async () => {
          running = true;
          await released;
          ending();
          running = false;
        },
      })
      .start();
    await until(async () => running, 'the run');
    const closed = t.close();
    await until(async () => t.platform.shutdown.closing.pending().some(({ step }) => step === name), 'the task among the closing steps');
    release();
    await closed;
    expect(running).to.equal(false);
  }

  it('are each a closing step: close waits for a run in progress and names its task meanwhile', async () => {
    const t = await startTestPlatform();
    await closeDuringRun(t, 'held_by_test');
    expect(t.platform.shutdown.closing.pending()).to.deep.equal([]);
  });

  it('writes the audit record a task makes while it stops before the platform has closed', async () => {
    const t = await startTestPlatform();
    const requestId = crypto.randomUUID();
    await closeDuringRun(t, 'records_as_it_stops', () =>
      t.platform.audit.record({ actor_type: 'platform', actor_user_id: null, actor_id: 'test', workspace_id: null, action: 'held.by.test', method: 'POST', path: '/held', resource_type: null, resource_id: null, outcome: 201, request_id: requestId, trace_id: null, source_address: null }),
    );
    // The test's database outlives the platform: the platform's own would be closed by now.
    expect(await t.platform.db('audit_records').where({ request_id: requestId }).select('action')).to.deep.equal([{ action: 'held.by.test' }]);
  });

  it('recover a run whose lease ran out while a purge is held up: the sweeper never waits for a purge', async function () {
    needsPostgres(this, 'PGlite has one connection: a held lock there blocks every other statement');
    // A session whose own platform sweeps nothing: only the platform under test can recover its run.
    const iris = await startStillIrisSession(unique('v'));
    const db = iris.t.platform.db;
    const old = crypto.randomUUID();
    await db('audit_records').insert({ id: old, created_at: new Date('2000-01-01T00:00:00Z'), actor_type: 'anonymous', action: 'held.by.test', method: 'POST', path: '/held', outcome: 401, request_id: old });
    const lock = await db.transaction();
    let t: TestPlatform | undefined;
    try {
      // The audit purge deletes this record first: with its row locked, the purge waits for as long as the lock is held.
      await lock('audit_records').where({ id: old }).forUpdate().first('id');
      const holder = ((await lock.raw('select pg_backend_pid() as pid')).rows[0] as { pid: number }).pid;
      t = await startTestPlatform();
      await until(async () => (await waitingOn(db, holder)) > 0, 'the audit purge waiting on the lock');

      const { owner, modelId, sessionId } = iris;
      const [row] = await invocationState.appendQueued(db, [queuedPredict({ workspaceId: owner.ws.id, sessionId, userId: owner.user.id, modelId })]);
      // Test setup only: a run whose executor vanished, its lease run out.
      await db('invocations').where({ id: row!.id }).update({ status: 'IN_PROGRESS', attempts: 1, lease_expires_at: new Date(Date.now() - 1000) });
      await until(async () => (await invocationsStore.byId(db, row!.id))?.status === 'QUEUED', 'the sweeper returning the run');
      // A purge's statement gives up at the pool's statement_timeout (15 s): a sweeper behind the purge would recover the run only then.
      expect(await waitingOn(db, holder), 'the purge is still held').to.be.greaterThan(0);

      await lock.commit();
      await until(async () => !(await db('audit_records').where({ id: old }).first('id')), 'the purge, once the lock is gone');
    } finally {
      if (!lock.isCompleted()) await lock.rollback();
      await t?.close();
      await iris.close();
    }
  });
});
