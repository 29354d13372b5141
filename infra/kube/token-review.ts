import { BadGatewayError, OAuthError } from '../../kernel/errors/errors.js';
import type { KubeApi } from './api.js';

/** The ServiceAccount a token the Kubernetes API vouched for belongs to. */
export interface ReviewedServiceAccount {
  namespace: string;
  serviceAccount: string;
}

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/**
 * Asks the Kubernetes API whether a ServiceAccount token is valid now, for
 * our audience (TokenReview): unlike a check of its signature alone, a token
 * of a deleted pod or ServiceAccount is refused.
 */
export class TokenReviewer {
  constructor(
    private readonly api: () => Promise<KubeApi>,
    private readonly audience: string,
  ) {}

  async review(token: string): Promise<ReviewedServiceAccount> {
    const status = await this.ask(token);
    if (!status?.authenticated) throw refuse(`the Kubernetes API does not accept it${status?.error ? ` (${status.error})` : ''}`);
    if (!status.audiences?.includes(this.audience)) throw refuse(`it was not issued for the audience "${this.audience}"`);
    const match = SERVICE_ACCOUNT_USER.exec(status.user?.username ?? '');
    if (!match) throw refuse('it is not a ServiceAccount\'s token');
    return { namespace: match[1]!, serviceAccount: match[2]! };
  }

  private async ask(token: string) {
    try {
      const api = await this.api();
      const review = await api.authentication.createTokenReview({
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [this.audience] } },
      });
      return review.status;
    } catch {
      // Its message stays here: the caller is anonymous.
      throw new BadGatewayError('The Kubernetes API could not review the token.');
    }
  }
}

const refuse = (reason: string) => new OAuthError(400, 'invalid_request', `The subject_token was refused: ${reason}.`);
