import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';

/** A key of the test issuer: what signs, and what its JWKS publishes. */
export interface IssuerKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function issuerKey(kid: string): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/**
 * A workload issuer on loopback for the tests: a discovery document and a
 * JWKS whose keys the test changes, counting each fetch of the JWKS.
 */
export class TestWorkloadIssuer {
  jwksFetches = 0;
  /** When the JWKS was last served (Date.now()), to wait out a cooldown from. */
  lastFetchAt = 0;
  published: IssuerKey[] = [];
  private server: http.Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') {
        res.end(JSON.stringify({ issuer: this.url, jwks_uri: `${this.url}/jwks` }));
      } else if (req.url === '/jwks') {
        this.jwksFetches += 1;
        this.lastFetchAt = Date.now();
        res.end(JSON.stringify({ keys: this.published.map((key) => key.publicJwk) }));
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** A token signed with `key`; `claims` may override iss, aud, exp. */
  sign(key: IssuerKey, claims: Record<string, unknown>, expiresIn: string | number = '5m'): Promise<string> {
    return new SignJWT({ iss: this.url, aud: 'didyma', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuedAt()
      .setExpirationTime(expiresIn)
      .sign(key.privateKey);
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
