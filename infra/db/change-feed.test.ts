import crypto from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { pino } from 'pino';
import { sharedDatabase, sharedDatabaseUrl } from '../../test/support/database.js';
import { needsPostgres } from '../../test/support/skips.js';
import { startTestPlatform, makeUser, makeWorkspace, login, type TestPlatform } from '../../test/support/platform.js';
import { acquireChangeFeed, announceCommitted, Announcer, ChangeFeed, parseAnnouncement, payloadsOf, releaseChangeFeed } from './change-feed.js';
import type { Db } from './database.js';

const quiet = pino({ level: 'silent' });

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A write of another process: another connection to PostgreSQL (PGlite belongs to one process, so has no other writer). */
async function writeElsewhere(sql: string, params: unknown[]): Promise<void> {
  const client = new pg.Client({ connectionString: await sharedDatabaseUrl() });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

describe('change feed: request-path caches follow every change', () => {
  let db: Db;

  /** How many times `authentications` of the token read the subject from the database. */
  async function subjectReads(platform: TestPlatform, token: string, authentications: number): Promise<number> {
    let reads = 0;
    const count = (query: { sql: string }) => void (/from "users"/.test(query.sql) && reads++);
    db.on('query', count);
    try {
      for (let i = 0; i < authentications; i++) await platform.platform.authenticator.authenticate(token);
    } finally {
      db.off('query', count);
    }
    return reads;
  }
  let feed: ChangeFeed;

  before(async () => {
    db = await sharedDatabase();
    feed = acquireChangeFeed(db, quiet);
    await until(() => feed.generation('identity') !== undefined, 'the feed to listen');
  });
  after(async () => {
    await releaseChangeFeed(db);
  });

  it("moves a topic's generation as soon as this process sends a write", async () => {
    const before = feed.generation('models');
    await db('models').where({ id: -1 }).update({ name: 'x' });
    expect(feed.generation('models')).to.not.equal(before);
  });

  it('moves it when another connection commits a change (the table triggers notify)', async function () {
    needsPostgres(this, 'PGlite belongs to one process: no other connection writes');
    const before = feed.generation('identity');
    await writeElsewhere('update workspaces set disabled = disabled where id = $1', [-1]);
    await until(() => feed.generation('identity') !== before, 'the notification');
  });

  it('wakes the followers of committed changes after the commit only: never on the write being sent, never on a rollback', async () => {
    let woken = 0;
    const stop = feed.subscribeCommitted('desired_state', () => woken++);
    try {
      await db
        .transaction(async (trx) => {
          await trx('deployments').where({ id: -1 }).update({ max_concurrent_calls: null });
          announceCommitted(trx, 'deployments', ['-1']);
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      let beforeCommit = -1;
      await db.transaction(async (trx) => {
        await trx('deployments').where({ id: -1 }).update({ max_concurrent_calls: null });
        announceCommitted(trx, 'deployments', ['-1']);
        beforeCommit = woken;
      });
      expect(beforeCommit).to.equal(0);
      await until(() => woken > 0, 'the announcement after the commit');
      // The follower's own writes (the reconciler records cluster states) do not wake it.
      await db('storage_configs').where({ id: -1 }).update({ cluster_message: null });
      expect(woken).to.equal(1);
    } finally {
      stop();
    }
  });

  describe('authentication', () => {
    let t: TestPlatform;
    before(async () => {
      t = await startTestPlatform();
    });
    after(async () => {
      await t.close();
    });

    it('reads the subject of a token once while nothing changes', async () => {
      const user = await makeUser(t.platform);
      const ws = await makeWorkspace(t.platform, [[user, 'user']]);
      const { access } = await login(t.auth, user, ws.name);
      await t.platform.authenticator.authenticate(access);
      expect(await subjectReads(t, access, 3)).to.equal(0);
    });

    it('reads the subject on every request when the read cache is off (DIDYMA_READ_CACHE_SIZE=0)', async () => {
      const strict = await startTestPlatform({ readCacheSize: 0 });
      try {
        const user = await makeUser(strict.platform);
        const ws = await makeWorkspace(strict.platform, [[user, 'user']]);
        const { access } = await login(strict.auth, user, ws.name);
        expect(await subjectReads(strict, access, 3)).to.equal(3);
      } finally {
        await strict.close();
      }
    });

    it('refuses a user disabled by another process on the next request after its notification', async function () {
      needsPostgres(this, 'PGlite belongs to one process: no other connection writes');
      const user = await makeUser(t.platform);
      const ws = await makeWorkspace(t.platform, [[user, 'user']]);
      const { access } = await login(t.auth, user, ws.name);
      expect((await t.public.get('/api/model', { token: access })).status).to.equal(200);
      const before = feed.generation('identity');
      await writeElsewhere('update users set is_active = false where id = $1', [user.id]);
      await until(() => feed.generation('identity') !== before, 'the notification');
      expect((await t.public.get('/api/model', { token: access })).status).to.equal(401);
    });

    it('refuses a member removed by this process on the very next request', async () => {
      const supervisor = await makeUser(t.platform);
      const member = await makeUser(t.platform);
      const ws = await makeWorkspace(t.platform, [
        [supervisor, 'supervisor'],
        [member, 'user'],
      ]);
      const { access } = await login(t.auth, member, ws.name);
      expect((await t.public.get('/api/model', { token: access })).status).to.equal(200);
      await db('memberships').where({ user_id: member.id, workspace_id: ws.id }).delete();
      expect((await t.public.get('/api/model', { token: access })).status).to.equal(401);
    });
  });
});

describe('announcements of committed changes: paced, never dropped', () => {
  it('sends the first change at once, the changes during the gap together after it, and the last change always', async () => {
    const sent: Array<{ at: number; payloads: string[] }> = [];
    const announcer = new Announcer(async (payloads) => void sent.push({ at: performance.now(), payloads }), 60);
    announcer.add('invocations', ['s1']);
    expect(sent, 'the first, at once').to.have.length(1);
    expect(sent[0]!.payloads).to.deep.equal(['invocations:s1']);
    for (let i = 0; i < 5; i++) announcer.add('invocations', [`s${i % 2}`]);
    await until(() => sent.length === 2, 'the changes made during the gap');
    expect(sent[1]!.at - sent[0]!.at, 'not before the gap').to.be.at.least(55);
    expect(sent[1]!.payloads, 'each session once').to.deep.equal(['invocations:s0,s1']);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(sent, 'five changes in one gap, one statement').to.have.length(2);
  });

  it('keeps announcing after a statement that failed', async () => {
    let calls = 0;
    const announcer = new Announcer(async () => {
      calls += 1;
      if (calls === 1) throw new Error('connection lost');
    }, 1);
    announcer.add('invocations', ['s1']);
    await until(() => calls === 1, 'the failed statement');
    await new Promise((resolve) => setTimeout(resolve, 5));
    announcer.add('invocations', ['s1']);
    await until(() => calls === 2, 'the next change');
  });

  it('splits the sessions into payloads PostgreSQL accepts, and names the whole table when too many changed at once', () => {
    const sessions = (count: number) => new Set(Array.from({ length: count }, () => crypto.randomUUID()));
    const some = payloadsOf('invocations', sessions(500));
    expect(some.length).to.be.within(2, 4);
    for (const payload of some) expect(Buffer.byteLength(payload), 'under the 8000-byte limit').to.be.below(8000);
    expect(some.flatMap((payload) => parseAnnouncement(payload).keys)).to.have.length(500);
    expect(payloadsOf('invocations', sessions(5000)), 'everything moved').to.deep.equal(['invocations']);
    expect(parseAnnouncement('invocations')).to.deep.equal({ table: 'invocations' });
  });

  it('wakes the followers of the sessions named, and every follower when the whole table moved', () => {
    const feed = new ChangeFeed();
    const woken: string[] = [];
    for (const session of ['a', 'b', 'c']) feed.subscribeKey('invocations', session, () => woken.push(session));
    feed.tableChanged('invocations', ['b']);
    expect(woken).to.deep.equal(['b']);
    feed.tableWritten('invocations'); // not yet committed: nothing to read
    expect(woken).to.deep.equal(['b']);
    feed.tableChanged('invocations');
    expect(woken).to.deep.equal(['b', 'a', 'b', 'c']);
  });
});
