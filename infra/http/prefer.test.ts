import { expect } from 'chai';
import { preferredWait } from './prefer.js';

describe('preferredWait (RFC 7240)', () => {
  it('reads the wait preference among others, in any case, with parameters and a quoted value', () => {
    expect(preferredWait('wait=10')).to.equal(10);
    expect(preferredWait('respond-async, WAIT = 5')).to.equal(5);
    expect(preferredWait('return=minimal; foo="a,b;c", wait=7;x=1')).to.equal(7);
    expect(preferredWait('wait="12"')).to.equal(12);
    expect(preferredWait('wait=0')).to.equal(0);
  });

  it('counts only the first wait preference', () => {
    expect(preferredWait('wait=3, wait=9')).to.equal(3);
    expect(preferredWait('wait=soon, wait=9')).to.equal(undefined);
  });

  it('ignores a header without a wait preference, and a malformed wait', () => {
    for (const header of [undefined, '', 'respond-async', 'return=representation', 'waiting=4', 'wait', 'wait=', 'wait=-1', 'wait=1.5', 'wait=1e3', 'wait=10000000000', 'wait=abc', '"wait=4"']) {
      expect(preferredWait(header), String(header)).to.equal(undefined);
    }
  });
});
