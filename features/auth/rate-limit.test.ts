import { expect } from 'chai';
import crypto from 'node:crypto';
import { RateLimiter } from './rate-limit.js';
import { rateLimitStore } from './rate-limit.store.js';
import { RateLimitedError } from '../../kernel/errors/errors.js';
import { sharedDatabase } from '../../test/support/database.js';
import type { Db } from '../../infra/db/database.js';
import { rejection } from '../../test/support/capture.js';

describe('RateLimiter (windows in the database)', () => {
  let db: Db;
  let now: number;
  const key = () => `login-account:${crypto.randomUUID()}@x.test`;
  before(async () => {
    db = await sharedDatabase();
  });
  beforeEach(() => {
    now = Date.UTC(2026, 0, 1, 12);
  });

  it('allows the limit per window, refuses the next with a retry time, and resets with the window', async () => {
    const limiter = new RateLimiter(db, rateLimitStore, { limit: 2, windowMs: 60_000 }, () => now);
    const k = key();
    await limiter.hit(k);
    await limiter.hit(k);
    const refused = await rejection(limiter.hit(k));
    expect(refused).to.be.instanceOf(RateLimitedError).with.property('headers').that.deep.equals({ 'Retry-After': '60' });
    await limiter.hit(key());
    now += 20_000;
    expect(await rejection(limiter.hit(k))).to.have.property('headers').that.deep.equals({ 'Retry-After': '40' });
    now += 40_001;
    await limiter.hit(k);
  });

  it('takes back a forgiven attempt, and starts a key again from nothing once reset', async () => {
    const limiter = new RateLimiter(db, rateLimitStore, { limit: 2, windowMs: 60_000 }, () => now);
    const k = key();
    await limiter.hit(k);
    await limiter.forgive(await limiter.hit(k));
    await limiter.hit(k);
    expect(await rejection(limiter.hit(k)), 'two attempts counted: the limit').to.be.instanceOf(RateLimitedError);
    const other = key();
    await limiter.hit(other);
    await limiter.reset(await limiter.hit(other));
    await limiter.hit(other);
    await limiter.hit(other);
    expect(await rejection(limiter.hit(other))).to.be.instanceOf(RateLimitedError);
  });

  it('forgives nothing in a window opened after the attempt', async () => {
    const limiter = new RateLimiter(db, rateLimitStore, { limit: 1, windowMs: 60_000 }, () => now);
    const k = key();
    const old = await limiter.hit(k);
    now += 60_001;
    await limiter.hit(k);
    await limiter.forgive(old);
    expect(await rejection(limiter.hit(k))).to.be.instanceOf(RateLimitedError);
  });

  it('counts the attempts of every replica into the same window', async () => {
    const replicas = [new RateLimiter(db, rateLimitStore, { limit: 3, windowMs: 60_000 }, () => now), new RateLimiter(db, rateLimitStore, { limit: 3, windowMs: 60_000 }, () => now)];
    const k = key();
    await replicas[0]!.hit(k);
    await replicas[1]!.hit(k);
    await replicas[0]!.hit(k);
    expect(await rejection(replicas[1]!.hit(k))).to.be.instanceOf(RateLimitedError);
  });

  it('counts concurrent attempts exactly', async () => {
    const limiter = new RateLimiter(db, rateLimitStore, { limit: 5, windowMs: 60_000 }, () => now);
    const k = key();
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => limiter.hit(k)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.length(5);
  });

  it('keeps no key in clear, and deletes ended windows as it goes', async () => {
    const limiter = new RateLimiter(db, rateLimitStore, { limit: 1000, windowMs: 1000 }, () => now);
    const k = key();
    await limiter.hit(k);
    const stored = (await db('rate_limit_windows').select('key_hash')) as Array<{ key_hash: string }>;
    expect(stored.map((row) => row.key_hash)).to.include(crypto.createHash('sha256').update(k).digest('hex'));
    expect(JSON.stringify(stored)).to.not.include('@x.test');
    now += 2000; // that window has ended
    for (let i = 0; i < 500; i++) await limiter.hit(`other:${i}`);
    expect(await db('rate_limit_windows').where({ key_hash: crypto.createHash('sha256').update(k).digest('hex') }).first()).to.equal(undefined);
  });
});
