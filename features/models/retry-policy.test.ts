import { expect } from 'chai';
import { DEFAULT_RETRY_POLICY, MAX_BACKOFF_MS, backoffAfter, policyOfModel, retryPolicyOf } from './retry-policy.js';

describe('retry policies: what registration stores and the waits the executor takes', () => {
  it('fills what a registration leaves out with the defaults, and leaves the backoff to the platform unless given', () => {
    expect(retryPolicyOf(undefined)).to.deep.equal({ max_attempts: 5, backoff_multiplier: 2, retry_on: ['unreachable', 'timeout', 'server_error'] });
    expect(retryPolicyOf({ max_attempts: 2, backoff_ms: 0, retry_on: ['timeout', 'timeout'] })).to.deep.equal({ max_attempts: 2, backoff_ms: 0, backoff_multiplier: 2, retry_on: ['timeout'] });
    expect(retryPolicyOf({ retry_on: [] }).retry_on).to.deep.equal([]);
    expect(policyOfModel(null)).to.equal(DEFAULT_RETRY_POLICY);
  });

  it('waits the base, then the base times the multiplier per attempt, never more than the cap', () => {
    expect([1, 2, 3].map((attempt) => backoffAfter(DEFAULT_RETRY_POLICY, attempt, 500))).to.deep.equal([500, 1000, 2000]);
    const own = retryPolicyOf({ backoff_ms: 100, backoff_multiplier: 1.5 });
    expect([1, 2, 3].map((attempt) => backoffAfter(own, attempt, 500))).to.deep.equal([100, 150, 225]);
    expect(backoffAfter(retryPolicyOf({ backoff_ms: 600_000, backoff_multiplier: 10, max_attempts: 20 }), 19, 500)).to.equal(MAX_BACKOFF_MS);
  });
});
