import { expect } from 'chai';
import crypto from 'node:crypto';
import { LoginGuard, type LoginGuardOptions } from './login-guard.js';
import { rateLimitStore } from './rate-limit.store.js';
import { sourceOf } from './source.js';
import { RateLimitedError } from '../../kernel/errors/errors.js';
import { sharedDatabase } from '../../test/support/database.js';
import { rejection } from '../../test/support/capture.js';
import { until } from '../../test/support/until.js';
import type { Db } from '../../infra/db/database.js';

const OPTIONS: LoginGuardOptions = { perSource: 3, perAccount: 6, perAddress: 1000, windowMs: 60_000, maxDelayMs: 2000, maxWaiting: 4, knownSourceMs: 86_400_000 };

describe('LoginGuard (lock-out per account and source)', () => {
  let db: Db;
  let now: number;
  let waits: number[];
  const account = () => `${crypto.randomUUID()}@x.test`;
  const address = () => `198.51.${crypto.randomInt(256)}.${crypto.randomInt(256)}`;
  const guard = (options: Partial<LoginGuardOptions> = {}, wait: (ms: number) => Promise<unknown> = async (ms) => waits.push(ms)) => new LoginGuard(db, rateLimitStore, { ...OPTIONS, ...options }, () => now, wait);
  /** `count` failed attempts: admitted, never succeeded. */
  const fail = async (g: LoginGuard, name: string, from: string, count: number) => {
    for (let i = 0; i < count; i++) await g.admit('login', name, from);
  };

  before(async () => {
    db = await sharedDatabase();
  });
  beforeEach(() => {
    now = Date.UTC(2026, 0, 1, 12);
    waits = [];
  });

  it('refuses a source past its limit on that account only: other sources and other accounts are not locked by it', async () => {
    const g = guard();
    const victim = account();
    const attacker = address();
    await fail(g, victim, attacker, 3);
    const refused = await rejection(g.admit('login', victim, attacker));
    expect(refused).to.be.instanceOf(RateLimitedError).with.property('headers').that.deep.equals({ 'Retry-After': '60' });
    await g.admit('login', victim, address());
    await g.admit('login', account(), attacker);
    await g.admit('oauth', victim, attacker);
    expect(waits, 'under the ceiling, nobody waits').to.deep.equal([]);
  });

  it('past the ceiling, delays unknown sources by more with every failure, up to the cap, and never refuses them', async () => {
    const g = guard();
    const victim = account();
    for (let i = 0; i < 2; i++) await fail(g, victim, address(), 3);
    expect(waits, 'six failures: at the ceiling').to.deep.equal([]);
    for (let i = 0; i < 5; i++) await fail(g, victim, address(), 3);
    expect(waits).to.deep.equal([250, 250, 250, 500, 500, 500, 1000, 1000, 1000, 2000, 2000, 2000, 2000, 2000, 2000]);
    expect(g.delayFor(1_000_000)).to.equal(2000);
    const owner = await g.admit('login', victim, address());
    expect(owner.account.count, 'checked after its wait, as any attempt').to.equal(22);
  });

  it('lets a source that logged in before pass without waiting, whatever other sources did', async () => {
    const g = guard();
    const victim = account();
    const home = address();
    await g.succeeded(await g.admit('login', victim, home));
    for (let i = 0; i < 4; i++) await fail(g, victim, address(), 3);
    const before = waits.length;
    await g.succeeded(await g.admit('login', victim, home));
    expect(waits.length, 'the known source waited for nothing').to.equal(before);
    await g.admit('login', victim, address());
    expect(waits.length, 'an unknown one still waits').to.equal(before + 1);
  });

  it('takes back a success from the account’s count, but not the other sources’ failures', async () => {
    const g = guard();
    const victim = account();
    await fail(g, victim, address(), 3);
    const from = address();
    await fail(g, victim, from, 2);
    await g.succeeded(await g.admit('login', victim, from));
    const windows = await g.windows('login', victim);
    expect(windows.account?.count, 'the three failures of the other source, the two of this one').to.equal(5);
    await fail(g, victim, from, 3);
    expect(await rejection(g.admit('login', victim, from)), 'its own count started again at the success').to.be.instanceOf(RateLimitedError);
  });

  it('holds one waiting attempt per source and a bounded number per process, refusing the next at once', async () => {
    const releases: Array<() => void> = [];
    let hold = true;
    const g = guard({ maxWaiting: 2 }, (ms) => {
      waits.push(ms);
      return hold ? new Promise<void>((resolve) => releases.push(resolve)) : Promise.resolve();
    });
    const victim = account();
    for (let i = 0; i < 2; i++) await fail(g, victim, address(), 3);
    const first = address();
    const waiting = [g.admit('login', victim, first)];
    await until(async () => waits.length === 1, 'the first attempt waiting');
    expect(await rejection(g.admit('login', victim, first)), 'a second attempt of the same source').to.be.instanceOf(RateLimitedError);
    waiting.push(g.admit('login', victim, address()));
    await until(async () => waits.length === 2, 'the second attempt waiting');
    const full = await rejection(g.admit('login', victim, address()));
    expect(full, 'the waiting room is full').to.be.instanceOf(RateLimitedError).with.nested.property('headers.Retry-After', '1');
    hold = false;
    for (const release of releases) release();
    await Promise.all(waiting);
    await g.admit('login', victim, address());
  });

  it('shows an account’s windows to staff by its name and lifts them all, leaving known sources known', async () => {
    const g = guard();
    const victim = account();
    const home = address();
    await g.succeeded(await g.admit('login', victim, home));
    const attacker = address();
    await fail(g, victim, attacker, 4).catch(() => undefined);
    for (let i = 0; i < 2; i++) await fail(g, victim, address(), 2);
    const windows = await g.windows('login', victim);
    expect(windows.account?.count).to.equal(7);
    expect(windows.sources.map((row) => row.count)).to.deep.equal([4, 2, 2]);
    await g.lift('login', victim);
    expect(await g.windows('login', victim)).to.deep.equal({ account: null, sources: [] });
    const known = crypto.createHash('sha256').update(`login-known:${victim}\u0000${home}`).digest('hex');
    expect(await rateLimitStore.isLive(db, known, new Date(now))).to.equal(true);
    await fail(g, victim, attacker, 3);
    const stored = (await db('rate_limit_windows').select('key_hash', 'account_hash')) as Array<{ key_hash: string; account_hash: string | null }>;
    expect(JSON.stringify(stored)).to.not.include(victim).and.not.include(attacker);
  });
});

describe('sourceOf', () => {
  it('counts an IPv6 address by its /64 and an IPv4-mapped one as its IPv4 address', () => {
    expect(sourceOf('2001:db8:1:2:aaaa::1')).to.equal(sourceOf('2001:db8:1:2:ffff:ffff:ffff:ffff')).and.equal('2001:db8:1:2::/64');
    expect(sourceOf('2001:db8:1:3::1')).to.not.equal(sourceOf('2001:db8:1:2::1'));
    expect(sourceOf('::ffff:192.0.2.7')).to.equal('192.0.2.7');
    expect(sourceOf('192.0.2.7')).to.equal('192.0.2.7');
    expect(sourceOf('unknown')).to.equal('unknown');
  });
});
