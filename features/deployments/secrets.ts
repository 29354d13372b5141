import type { SecretBox } from '../../infra/crypto/secrets.js';

export const MASK = '********';

/** Splits an init object into what may be stored and shown, and the sealed secret values. */
export function splitSecrets(init: Record<string, unknown>, secretKeys: readonly string[]) {
  const plain: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const [key, value] of Object.entries(init)) {
    if (secretKeys.includes(key) && typeof value === 'string') secrets[key] = value;
    else plain[key] = value;
  }
  return { plain, secrets };
}

export function sealSecrets(box: SecretBox, secrets: Record<string, string>): string | null {
  return Object.keys(secrets).length ? box.sealJson(secrets) : null;
}

/** The init object as responses show it: each configured secret as a mask, never its value. */
export function maskedInit(plain: Record<string, unknown>, secretKeys: readonly string[]): Record<string, unknown> {
  const masked = { ...plain };
  for (const key of secretKeys) masked[key] = MASK;
  return masked;
}

/** Names of the secrets a sealed value holds. */
export function sealedKeys(box: SecretBox, sealed: string | null): string[] {
  return Object.keys(box.openJson(sealed));
}

/** The full init object (plain + decrypted secrets), only for calling the backend. */
export function fullInit(plain: Record<string, unknown>, sealed: string | null, box: SecretBox): Record<string, unknown> {
  return { ...plain, ...box.openJson(sealed) };
}
