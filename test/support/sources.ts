import crypto from 'node:crypto';

/**
 * A client address in a /64 of its own (login failures count per IPv6 /64),
 * for an `X-Forwarded-For` header: the login windows of a test process share
 * one database, so each test counts from sources no other test uses.
 */
export function randomAddress(): string {
  const group = () => crypto.randomBytes(2).toString('hex');
  return `2001:db8:${group()}:${group()}::${group()}`;
}
