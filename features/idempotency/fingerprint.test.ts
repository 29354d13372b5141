import { expect } from 'chai';
import { canonicalJson, IDEMPOTENCY_KEY, requestFingerprint } from './fingerprint.js';
import { isKept } from './service.js';

describe('idempotency keys: what a key stands for', () => {
  it('writes the same JSON for the same value whatever the order of its keys', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: null } })).to.equal('{"a":{"c":null,"d":[{"x":2,"y":1}]},"b":1}');
    expect(canonicalJson(undefined)).to.equal('');
  });

  it('tells requests apart by method, path and body', () => {
    const same = requestFingerprint('POST', '/a', { x: 1, y: 2 });
    expect(requestFingerprint('post', '/a', { y: 2, x: 1 })).to.equal(same);
    expect(requestFingerprint('POST', '/b', { x: 1, y: 2 })).to.not.equal(same);
    expect(requestFingerprint('POST', '/a', { x: 1, y: 3 })).to.not.equal(same);
    expect(requestFingerprint('PUT', '/a', { x: 1, y: 2 })).to.not.equal(same);
  });

  it('takes 1 to 255 printable ASCII characters as a key', () => {
    for (const key of ['a', 'x'.repeat(255), '8f9c2b1e-0d4a-4c1e-9a7b-3e2f1d0c9b8a', 'order 42: retry ~ok']) expect(IDEMPOTENCY_KEY.test(key), key).to.equal(true);
    for (const key of ['', 'x'.repeat(256), 'clé', 'tab\there', 'line\n', '\u0000']) expect(IDEMPOTENCY_KEY.test(key), JSON.stringify(key)).to.equal(false);
  });

  it('keeps successes only: a failure created nothing to repeat', () => {
    expect([200, 201, 202].every(isKept)).to.equal(true);
    expect([400, 401, 403, 404, 409, 410, 422, 429, 500, 502, 503].some(isKept)).to.equal(false);
  });
});
