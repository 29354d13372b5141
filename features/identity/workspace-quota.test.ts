import { expect } from 'chai';
import { quotaProblems } from './workspaces.service.js';

describe('workspace quota: the checks of a change', () => {
  it('accepts weights from 1 to 1000, positive limits and null for no limit', () => {
    expect(quotaProblems({ share_weight: 1, max_in_flight: null, max_queued: 5 })).to.deep.equal([]);
    expect(quotaProblems({ share_weight: 1000 })).to.deep.equal([]);
    expect(quotaProblems({})).to.deep.equal([]);
  });

  it('names each offending field and what it takes', () => {
    expect(quotaProblems({ share_weight: 0, max_in_flight: 0, max_queued: 2.5 })).to.deep.equal([
      { field: 'share_weight', message: 'share_weight: a whole number from 1 to 1000.' },
      { field: 'max_in_flight', message: 'max_in_flight: a whole number of at least 1, or null for no limit.' },
      { field: 'max_queued', message: 'max_queued: a whole number of at least 1, or null for no limit.' },
    ]);
    expect(quotaProblems({ share_weight: null })).to.have.length(1);
  });
});
