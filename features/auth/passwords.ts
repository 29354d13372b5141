import { hash, verify } from '@node-rs/argon2';

// Algorithm.Argon2id; the package exports it as an ambient const enum.
const ARGON2ID = 2;

// argon2id with the OWASP minimum recommendation (19 MiB, t=2, p=1).
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

// Verifying against this keeps the time of a login for an unknown e-mail the
// same as for a known one, so timing does not reveal which accounts exist.
let dummyHash: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (!passwordHash) {
    dummyHash ??= hashPassword('didyma-timing-equaliser');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}

/** Strength rules of the registration form, shared by the API and the dashboard. */
export function passwordProblems(password: string, email = ''): string[] {
  const problems: string[] = [];
  if (password.length < 12) problems.push('at least 12 characters');
  if (password.length > 128) problems.push('at most 128 characters');
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (classes < 3) problems.push('at least three of: lower-case letters, upper-case letters, digits, symbols');
  const local = email.split('@')[0]?.toLowerCase() ?? '';
  if (local.length >= 4 && password.toLowerCase().includes(local)) problems.push('must not contain the e-mail name');
  return problems;
}
