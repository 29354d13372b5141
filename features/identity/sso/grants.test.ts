import { expect } from 'chai';
import type { OidcConnection } from '../../../kernel/config/oidc.js';
import { emailAllowed, grantsFor, groupsIn } from './grants.js';

const connection = (extra: Partial<OidcConnection> = {}): OidcConnection => ({
  id: 'corp',
  displayName: 'Corp',
  issuer: 'https://login.example.test',
  clientId: 'didyma',
  clientSecret: undefined,
  secretSource: undefined,
  scopes: ['openid'],
  groupsClaim: ['groups'],
  workspaceGrants: [
    { group: 'team-a', workspace: 'a', role: 'user' },
    { group: 'team-a-leads', workspace: 'a', role: 'supervisor' },
    { group: 'team-b', workspace: 'b', role: 'user' },
  ],
  staffGroups: ['admins'],
  allowedDomains: ['example.test'],
  createUsers: true,
  requireMappedGroup: true,
  ...extra,
});

describe('single sign-on grants', () => {
  it('gives the highest role any group maps, and null for every mapped workspace no group matches', () => {
    const grants = grantsFor(connection(), ['team-a-leads', 'team-a', 'elsewhere']);
    expect([...grants.workspaces]).to.deep.equal([['a', 'supervisor'], ['b', null]]);
    expect(grants).to.include({ staff: false, anything: true });
  });

  it('maps staff alone, and leaves staff alone when no group maps it', () => {
    expect(grantsFor(connection(), ['admins'])).to.include({ staff: true, anything: true });
    const none = grantsFor(connection({ staffGroups: [] }), []);
    expect(none).to.include({ staff: undefined, anything: false });
    expect([...none.workspaces.values()]).to.deep.equal([null, null]);
  });

  it('reads groups at a path of the claims, as an array or one string', () => {
    expect(groupsIn({ groups: ['a', 7, 'b'] }, ['groups'])).to.deep.equal(['a', 'b']);
    expect(groupsIn({ realm_access: { roles: ['x'] } }, ['realm_access', 'roles'])).to.deep.equal(['x']);
    expect(groupsIn({ group: 'solo' }, ['group'])).to.deep.equal(['solo']);
    expect(groupsIn({ groups: { a: 1 } }, ['groups'])).to.deep.equal([]);
    expect(groupsIn({}, ['realm_access', 'roles'])).to.deep.equal([]);
  });

  it('allows the listed e-mail domains only, exactly', () => {
    expect(emailAllowed(connection(), 'ann@example.test')).to.equal(true);
    expect(emailAllowed(connection(), 'ann@EXAMPLE.test')).to.equal(true);
    expect(emailAllowed(connection(), 'ann@sub.example.test')).to.equal(false);
    expect(emailAllowed(connection(), 'ann@example.test.evil')).to.equal(false);
    expect(emailAllowed(connection({ allowedDomains: [] }), 'ann@anywhere.test')).to.equal(true);
  });
});
