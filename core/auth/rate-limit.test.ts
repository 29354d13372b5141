import { expect } from 'chai';
import { RateLimiter } from './rate-limit.js';
import { RateLimitedError } from '../errors/errors.js';

describe('RateLimiter', () => {
  it('allows the limit per window, refuses the next with a retry time, and resets with the window', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(2, 60_000, () => now);
    limiter.hit('k');
    limiter.hit('k');
    expect(() => limiter.hit('k')).to.throw(RateLimitedError).with.property('headers').that.deep.equals({ 'Retry-After': '60' });
    limiter.hit('other');
    now += 60_001;
    expect(() => limiter.hit('k')).to.not.throw();
  });
});
