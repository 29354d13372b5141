import { JwtIssuerVerifier } from '../../../infra/oidc/workload-jwt.js';
import type { WorkloadIssuer } from '../../../kernel/config/workload.js';
import type { SubjectTokenKind, WorkloadIdentity } from './identity.js';

/** JWTs of the configured workload issuers, mapped by the value of one claim. */
export class IssuerTokens implements SubjectTokenKind {
  private readonly verifiers = new Map<string, { issuer: WorkloadIssuer; verifier: JwtIssuerVerifier }>();

  constructor(issuers: WorkloadIssuer[], limits: { cooldownMs: number; timeoutMs: number }) {
    for (const issuer of issuers) {
      const verifier = new JwtIssuerVerifier({ issuer: issuer.issuer, audience: issuer.audience, jwksUri: issuer.jwksUri, algorithms: issuer.algorithms, ...limits });
      this.verifiers.set(issuer.issuer, { issuer, verifier });
    }
  }

  accepts(unverified: Record<string, unknown>): boolean {
    return typeof unverified.iss === 'string' && this.verifiers.has(unverified.iss);
  }

  account(unverified: Record<string, unknown>): string {
    return `issuer:${String(unverified.iss)}`;
  }

  async identify(token: string, unverified: Record<string, unknown>): Promise<WorkloadIdentity> {
    const { issuer, verifier } = this.verifiers.get(String(unverified.iss))!;
    const claims = await verifier.verify(token);
    const value = claims[issuer.claim];
    const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
    return {
      key: `jwt\u0000${issuer.issuer}\u0000${issuer.claim}\u0000${text}`,
      label: `${issuer.claim} ${text} of ${issuer.issuer}`,
      grants: text ? issuer.grants.filter((grant) => grant.value === text).map(({ workspace, role }) => ({ workspace, role })) : [],
    };
  }
}
