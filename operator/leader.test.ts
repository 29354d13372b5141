import { expect } from 'chai';
import { V1MicroTime } from '@kubernetes/client-node';
import { mayAcquire } from './leader.js';

describe('leader election', () => {
  const now = 1_000_000;

  it('takes a free lease, or its own', () => {
    expect(mayAcquire(undefined, 'me', now, now)).to.equal(true);
    expect(mayAcquire({ holderIdentity: '' }, 'me', now, now)).to.equal(true);
    expect(mayAcquire({ holderIdentity: 'me', leaseDurationSeconds: 15 }, 'me', now, now)).to.equal(true);
  });

  it('leaves another holder alone until it has not renewed for a whole lease duration, on the local clock', () => {
    const spec = { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: new V1MicroTime('1999-01-01T00:00:00Z') };
    // The remote renewTime is ancient, but this replica saw the record change only now: skew cannot matter.
    expect(mayAcquire(spec, 'me', now, now + 14_999)).to.equal(false);
    expect(mayAcquire(spec, 'me', now, now + 15_000)).to.equal(true);
  });
});
