import { expect } from 'chai';
import { bucketOf, pickTarget, policyAfterMove, policyInput } from './alias-policy.js';

describe('alias traffic policy rules', () => {
  it('picks the target whose cumulative weight first exceeds the bucket, the same for the same key', () => {
    const targets = [{ modelId: 7, weight: 90 }, { modelId: 3, weight: 0 }, { modelId: 9, weight: 10 }];
    const keys = Array.from({ length: 400 }, (_, i) => `session:${i}`);
    for (const key of keys) {
      const expected = bucketOf(`5:${key}`) < 90 ? 7 : 9;
      expect(pickTarget(5, key, targets), key).to.equal(expected);
      expect(pickTarget(5, key, targets)).to.equal(pickTarget(5, key, targets));
    }
    // Buckets cover 0..99: over 400 keys both ends of the range are reached and a weight of 0 is never picked.
    const buckets = keys.map((key) => bucketOf(key));
    expect(Math.min(...buckets)).to.be.at.least(0);
    expect(Math.max(...buckets)).to.be.below(100);
    expect(keys.map((key) => pickTarget(5, key, targets))).to.not.include(3);
  });

  it('hashes each alias apart: one key lands differently on different aliases', () => {
    const picks = new Set(Array.from({ length: 40 }, (_, aliasId) => bucketOf(`${aliasId}:user:42`) < 50));
    expect([...picks].sort()).to.deep.equal([false, true]);
  });

  it('moves the primary weight with the alias, merging a weighted target and dropping a shadow it moves to', () => {
    const policy = { sticky: 'user' as const, weights: [{ version: '1', weight: 70 }, { version: '2', weight: 20 }, { version: '3', weight: 10 }], shadows: ['4'] };
    expect(policyAfterMove(policy, '5').weights).to.deep.equal([{ version: '5', weight: 70 }, { version: '2', weight: 20 }, { version: '3', weight: 10 }]);
    expect(policyAfterMove(policy, '2')).to.deep.equal({ sticky: 'user', weights: [{ version: '2', weight: 90 }, { version: '3', weight: 10 }], shadows: ['4'] });
    expect(policyAfterMove(policy, '4')).to.deep.equal({ sticky: 'user', weights: [{ version: '4', weight: 70 }, { version: '2', weight: 20 }, { version: '3', weight: 10 }], shadows: [] });
  });

  it('defaults to session stickiness and no shadows', () => {
    expect(policyInput({ weights: [{ version: '1', weight: 100 }] })).to.deep.equal({ sticky: 'session', weights: [{ version: '1', weight: 100 }], shadows: [] });
  });
});
