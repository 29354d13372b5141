import crypto from 'node:crypto';
import type { Db } from '../../../infra/db/database.js';
import type { SecretBox } from '../../../infra/crypto/secrets.js';
import { constantTimeEqual, randomToken, sha256 } from '../../../infra/crypto/random.js';
import { InputError } from '../../../kernel/errors/errors.js';
import type { SsoStore } from './store.js';

/** What a native app (the CLI) sends with its sign-in: RFC 8252's loopback redirect with PKCE. */
export interface AppRequest {
  redirectUri: string;
  codeChallenge: string;
  state: string;
}

/** A completed sign-in, before didyma issues its tokens: whom, through which identity, and the provider's tokens. */
export interface SignInGrant {
  userId: number;
  identityId: number;
  refreshToken: string | undefined;
  idToken: string | undefined;
}

/** Seconds a native app has to redeem its code. */
const CODE_TTL_SECONDS = 60;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A native app's request, checked: the redirect must be plain http to a
 * loopback address (the app's own listener, RFC 8252 §7.3), the challenge
 * an S256 one, the state short. Undefined when the request is no app's.
 */
export function appRequestOf(query: { redirect_uri?: unknown; code_challenge?: unknown; code_challenge_method?: unknown; state?: unknown }): AppRequest | undefined {
  if (query.redirect_uri === undefined) return undefined;
  const redirect = typeof query.redirect_uri === 'string' ? safeUrl(query.redirect_uri) : undefined;
  if (!redirect || redirect.protocol !== 'http:' || !LOOPBACK_HOSTS.has(redirect.hostname) || redirect.hash || redirect.username) {
    throw new InputError('redirect_uri: expected an http URL on a loopback address (127.0.0.1, [::1] or localhost), the app\'s own listener.');
  }
  if (query.code_challenge_method !== 'S256' || typeof query.code_challenge !== 'string' || !CHALLENGE.test(query.code_challenge)) {
    throw new InputError('code_challenge: expected an S256 challenge (code_challenge_method=S256).');
  }
  if (typeof query.state !== 'string' || query.state.length < 8 || query.state.length > 512) throw new InputError('state: expected 8 to 512 characters.');
  return { redirectUri: redirect.href, codeChallenge: query.code_challenge, state: query.state };
}

function safeUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** The one-time codes that hand a native app its sign-in, against its PKCE verifier. */
export class AppCodes {
  constructor(private readonly deps: { db: Db; box: SecretBox; sso: SsoStore; now: () => number }) {}

  /** Where to send the browser back to the app: its redirect with a new code and its state. */
  async issue(app: AppRequest, grant: SignInGrant): Promise<string> {
    const code = randomToken(32);
    const now = this.deps.now();
    await this.deps.sso.putAppCode(
      this.deps.db,
      { code_hash: sha256(code), redirect_uri: app.redirectUri, code_challenge: app.codeChallenge, grant_sealed: this.deps.box.seal(JSON.stringify(grant)), expires_at: new Date(now + CODE_TTL_SECONDS * 1000) },
      new Date(now),
    );
    const back = new URL(app.redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', app.state);
    return back.href;
  }

  /** The sign-in of the code, once, to the app that holds the verifier of the code's challenge. */
  async redeem(input: { code: string; code_verifier: string; redirect_uri: string }): Promise<SignInGrant> {
    const row = await this.deps.sso.takeAppCode(this.deps.db, sha256(input.code), new Date(this.deps.now()));
    if (!row) throw new InputError('This code has expired or was already used: sign in again.');
    const challenge = crypto.createHash('sha256').update(input.code_verifier).digest('base64url');
    // Whoever holds the code without the verifier gets nothing, and the code is spent.
    if (row.redirect_uri !== input.redirect_uri || !constantTimeEqual(challenge, row.code_challenge)) {
      throw new InputError('The code_verifier or redirect_uri does not match the sign-in: sign in again.');
    }
    return JSON.parse(this.deps.box.open(row.grant_sealed)) as SignInGrant;
  }
}
