import { expect } from 'chai';
import type { OidcConnection } from '../../../kernel/config/oidc.js';
import { NotAllowedError } from '../../../kernel/errors/errors.js';
import { personOf } from './person.js';

const connection = { id: 'corp', displayName: 'Corp', groupsClaim: ['groups'] } as OidcConnection;
const claims = { iss: 'https://login.example.test', sub: 's-1', email: 'Ann@Example.test', email_verified: true, given_name: 'Ann', family_name: 'Lee', groups: ['a'] };

describe('the person of an ID token', () => {
  it('takes the verified e-mail (lower-cased), the names and the groups', () => {
    expect(personOf(connection, claims)).to.deep.equal({ issuer: claims.iss, subject: 's-1', email: 'ann@example.test', name: 'Ann', surname: 'Lee', groups: ['a'] });
  });

  it('refuses an unverified or missing e-mail', () => {
    expect(() => personOf(connection, { ...claims, email_verified: false })).to.throw(NotAllowedError, /has not verified the e-mail address ann@example.test/);
    expect(() => personOf(connection, { ...claims, email_verified: 'true' })).to.throw(NotAllowedError, /has not verified/);
    expect(() => personOf(connection, { ...claims, email: undefined })).to.throw(NotAllowedError, /sent no e-mail address/);
  });

  it('refuses a group overage claim rather than read it as no groups', () => {
    const overage = { ...claims, groups: undefined, _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint: 'https://graph.example.test' } } };
    expect(() => personOf(connection, overage)).to.throw(NotAllowedError, /group overage claim/);
    expect(() => personOf(connection, { ...claims, groups: undefined, hasgroups: true })).to.throw(NotAllowedError, /group overage claim/);
    expect(personOf(connection, { ...claims, _claim_names: { address: 'src1' } }).groups).to.deep.equal(['a']);
  });
});
