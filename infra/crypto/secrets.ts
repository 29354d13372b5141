import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const VERSION = 'v1';

/**
 * AES-256-GCM for credentials kept in the database (`secret_key`, `*_pat`).
 * The ciphertext names its format version so the key or algorithm can rotate.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('The secret key must be 32 bytes.');
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join(':');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('Unknown secret format.');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }

  sealJson(value: Record<string, string>): string {
    return this.seal(JSON.stringify(value));
  }

  openJson(sealed: string | null): Record<string, string> {
    return sealed ? (JSON.parse(this.open(sealed)) as Record<string, string>) : {};
  }
}

/** The key from its file (32 raw bytes or base64 of them), or one generated once under the data folder. */
export function loadSecretBox(keyFile: string | undefined, dataDir: string): SecretBox {
  const file = keyFile ?? path.join(dataDir, 'keys', 'secrets.key');
  if (!keyFile && !fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  const raw = fs.readFileSync(file);
  const key = raw.length === 32 ? raw : Buffer.from(raw.toString('utf8').trim(), 'base64');
  return new SecretBox(key);
}
