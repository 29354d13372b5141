import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface SigningKeys {
  kid: string;
  /** Present only where tokens are issued (the auth server). */
  privateKey?: KeyObject;
  publicKey: KeyObject;
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
export function jwks(keys: SigningKeys): { keys: object[] } {
  const jwk = keys.publicKey.export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: keys.kid, alg: 'EdDSA', use: 'sig' }] };
}
