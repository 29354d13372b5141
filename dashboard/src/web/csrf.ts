import crypto from 'node:crypto';
import { isPublished, type TokenKeys } from '../../../features/auth/keys.js';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * CSRF tokens of the dashboard's forms: HMAC-SHA256 of what the request is
 * bound to (the session id once signed in, else a random pre-session cookie),
 * under a server key. An attacker can neither read those cookies nor compute
 * the HMAC, and nothing is stored per form.
 */
export class CsrfTokens {
  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new Error('The CSRF key must have at least 32 bytes.');
  }

  /**
   * The key derived (HKDF) from the auth server's signing key: every replica
   * agrees without another secret to distribute, and the derived key reveals
   * nothing about the signing key.
   */
  static fromSigningKey(keys: TokenKeys): CsrfTokens {
    if (isPublished(keys) || !keys.privateKey) throw new Error('The dashboard runs where tokens are signed: this process holds no signing key.');
    const material = keys.privateKey.export({ format: 'der', type: 'pkcs8' });
    return new CsrfTokens(Buffer.from(crypto.hkdfSync('sha256', material, 'didyma', 'dashboard csrf v1', 32)));
  }

  tokenFor(binding: string): string {
    return crypto.createHmac('sha256', this.key).update(`csrf:${binding}`).digest('base64url');
  }

  isValid(binding: string | undefined, submitted: unknown): boolean {
    if (!binding || typeof submitted !== 'string' || !TOKEN.test(submitted)) return false;
    return crypto.timingSafeEqual(Buffer.from(this.tokenFor(binding)), Buffer.from(submitted));
  }
}
