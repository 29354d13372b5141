import crypto from 'node:crypto';

// Standard Webhooks signing (https://www.standardwebhooks.com): the secret is
// `whsec_` and base64 of random bytes, and each attempt is signed over
// `<webhook-id>.<webhook-timestamp>.<body>` with HMAC-SHA256.

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new endpoint secret, shown to the supervisor once. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${crypto.randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** `v1,<base64 HMAC-SHA256>` of one attempt, with the secret's key bytes (the base64 after `whsec_`). */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = crypto.createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one attempt of a delivery. */
export function webhookHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': webhookSignature(secret, id, timestampSeconds, body),
  };
}
