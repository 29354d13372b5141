import type { TokenReviewer } from '../../../infra/kube/token-review.js';
import type { ServiceAccountGrant } from '../../../kernel/config/workload.js';
import type { SubjectTokenKind, WorkloadIdentity } from './identity.js';

/** Kubernetes ServiceAccount tokens, checked by TokenReview and mapped by (namespace, ServiceAccount). */
export class ServiceAccountTokens implements SubjectTokenKind {
  constructor(
    private readonly grants: ServiceAccountGrant[],
    private readonly reviewer: TokenReviewer,
  ) {}

  /** Only what looks like a ServiceAccount token goes to the Kubernetes API: its claims name the pod's or account's namespace. */
  accepts(unverified: Record<string, unknown>): boolean {
    const kubernetes = unverified['kubernetes.io'];
    return this.grants.length > 0 && kubernetes !== null && typeof kubernetes === 'object';
  }

  account(): string {
    return 'kubernetes';
  }

  async identify(token: string): Promise<WorkloadIdentity> {
    const { namespace, serviceAccount } = await this.reviewer.review(token);
    return {
      key: `serviceaccount\u0000${namespace}\u0000${serviceAccount}`,
      label: `system:serviceaccount:${namespace}:${serviceAccount}`,
      grants: this.grants.filter((g) => g.namespace === namespace && g.serviceAccount === serviceAccount).map(({ workspace, role }) => ({ workspace, role })),
    };
  }
}
