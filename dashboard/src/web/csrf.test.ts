import { expect } from 'chai';
import { generateSigningKeys } from '../../../features/auth/keys.js';
import { CsrfTokens } from './csrf.js';

describe('dashboard CSRF tokens', () => {
  const csrf = CsrfTokens.fromSigningKey(generateSigningKeys());

  it('accepts the token made for the same binding', () => {
    expect(csrf.isValid('session-a', csrf.tokenFor('session-a'))).to.equal(true);
  });

  it('refuses a token of another session, a missing binding and malformed tokens', () => {
    const token = csrf.tokenFor('session-a');
    expect(csrf.isValid('session-b', token)).to.equal(false);
    expect(csrf.isValid(undefined, token)).to.equal(false);
    expect(csrf.isValid('session-a', undefined)).to.equal(false);
    expect(csrf.isValid('session-a', '')).to.equal(false);
    expect(csrf.isValid('session-a', [token])).to.equal(false);
    expect(csrf.isValid('session-a', `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).to.equal(false);
  });

  it('derives a different key from a different signing key', () => {
    const other = CsrfTokens.fromSigningKey(generateSigningKeys());
    expect(other.isValid('session-a', csrf.tokenFor('session-a'))).to.equal(false);
  });

  it('refuses to run without the signing key', () => {
    const { publicKey, kid } = generateSigningKeys();
    expect(() => CsrfTokens.fromSigningKey({ publicKey, kid })).to.throw(/no signing key/);
  });
});
