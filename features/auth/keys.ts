import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';

export interface SigningKeys {
  kid: string;
  /** Present only where tokens are issued (the auth server). */
  privateKey?: KeyObject;
  publicKey: KeyObject;
}

/** The keys the auth server publishes, for a process that verifies tokens holding no key of its own. */
export interface PublishedKeys {
  jwksUrl: string;
  keySet: JWTVerifyGetKey;
}

/** What a process checks tokens with: a key it holds, or the auth server's published keys. */
export type TokenKeys = SigningKeys | PublishedKeys;

export const isPublished = (keys: TokenKeys): keys is PublishedKeys => 'keySet' in keys;

/** The key (or key set) jwtVerify is given. */
export const verificationKey = (keys: TokenKeys): KeyObject | JWTVerifyGetKey => (isPublished(keys) ? keys.keySet : keys.publicKey);

export interface PublishedKeyOptions {
  /** Least time between two fetches, so tokens with unknown `kid`s cannot make us fetch at will. */
  cooldownMs: number;
  timeoutMs: number;
}

/** The auth server's JWKS, fetched when first needed, again when stale and for an unknown `kid` (at most once per cooldown). */
export function publishedKeys(jwksUrl: string, options: PublishedKeyOptions): PublishedKeys {
  return { jwksUrl, keySet: createRemoteJWKSet(new URL(jwksUrl), { cooldownDuration: options.cooldownMs, timeoutDuration: options.timeoutMs }) };
}

export function keysFromPrivate(privateKey: KeyObject): SigningKeys {
  const publicKey = crypto.createPublicKey(privateKey);
  return { kid: keyId(publicKey), privateKey, publicKey };
}

export function keysFromPublic(publicKey: KeyObject): SigningKeys {
  return { kid: keyId(publicKey), publicKey };
}

export function generateSigningKeys(): SigningKeys {
  return keysFromPrivate(crypto.generateKeyPairSync('ed25519').privateKey);
}

export interface KeyFiles {
  privateKeyFile?: string;
  publicKeyFile?: string;
  dataDir: string;
}

export interface KeySources extends KeyFiles {
  jwksUrl?: string;
  published: PublishedKeyOptions;
}

/**
 * The keys of a process: the signing key's file (the auth server), else the
 * public key's file, else the auth server's published keys, else (embedded
 * default) a signing key generated once under the data folder.
 */
export function loadTokenKeys(sources: KeySources): TokenKeys {
  if (!sources.privateKeyFile && !sources.publicKeyFile && sources.jwksUrl) return publishedKeys(sources.jwksUrl, sources.published);
  return loadSigningKeys(sources);
}

/**
 * The signing key from its file, or (embedded default) one generated once under
 * the data folder. A verifying-only process may be given just the public key.
 */
export function loadSigningKeys(files: KeyFiles): SigningKeys {
  if (files.privateKeyFile) return keysFromPrivate(readKey(files.privateKeyFile, 'private'));
  if (files.publicKeyFile) return keysFromPublic(readKey(files.publicKeyFile, 'public'));
  const file = path.join(files.dataDir, 'keys', 'jwt-ed25519.pem');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const { privateKey } = crypto.generateKeyPairSync('ed25519');
    fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  }
  return keysFromPrivate(readKey(file, 'private'));
}

function readKey(file: string, kind: 'private' | 'public'): KeyObject {
  const pem = fs.readFileSync(file);
  const key = kind === 'private' ? crypto.createPrivateKey(pem) : crypto.createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file}: expected an Ed25519 ${kind} key`);
  return key;
}

function keyId(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return crypto.createHash('sha256').update(der).digest('base64url').slice(0, 16);
}

/** The JWKS document served by the auth server. */
export function jwks(keys: TokenKeys): { keys: object[] } {
  if (isPublished(keys)) throw new Error(`This process holds no key to publish: it verifies with ${keys.jwksUrl}.`);
  const jwk = keys.publicKey.export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: keys.kid, alg: 'EdDSA', use: 'sig' }] };
}
