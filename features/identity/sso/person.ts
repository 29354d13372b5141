import type { OidcConnection } from '../../../kernel/config/oidc.js';
import { NotAllowedError } from '../../../kernel/errors/errors.js';
import { groupsIn } from './grants.js';

/** Who the provider says signed in, from the verified ID token. */
export interface ProviderPerson {
  issuer: string;
  subject: string;
  email: string;
  name: string;
  surname: string;
  groups: string[];
}

/** The person of a verified ID token: a verified e-mail is required, as it may link an existing account. */
export function personOf(connection: OidcConnection, claims: Record<string, unknown>): ProviderPerson {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email.includes('@')) throw new NotAllowedError(`${connection.displayName} sent no e-mail address: add the "email" scope to the connection.`);
  if (claims.email_verified !== true) throw new NotAllowedError(`${connection.displayName} has not verified the e-mail address ${email}.`);
  const text = (key: string) => (typeof claims[key] === 'string' ? (claims[key] as string) : '');
  return { issuer: text('iss'), subject: text('sub'), email, name: text('given_name'), surname: text('family_name'), groups: groupsOf(connection, claims) };
}

/**
 * The person's groups. A provider that had too many to put in the token says
 * so instead (Entra ID's `_claim_names` / `hasgroups` overage): refused, as
 * reading no groups would silently take every role away.
 */
export function groupsOf(connection: OidcConnection, claims: Record<string, unknown>): string[] {
  const claimNames = claims._claim_names;
  const overage = claims.hasgroups === true || (claimNames !== null && typeof claimNames === 'object' && connection.groupsClaim[0]! in claimNames);
  if (overage) throw new NotAllowedError(`${connection.displayName} sent too many groups to fit in the token (a group overage claim): ask for fewer groups in the token (e.g. groups assigned to the application).`);
  return groupsIn(claims, connection.groupsClaim);
}
