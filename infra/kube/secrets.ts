import { LRUCache } from 'lru-cache';
import type { KubeConnection } from './connection.js';

/** The decoded data of a credentials Secret. */
export async function readSecret(kube: KubeConnection, name: string): Promise<Record<string, string>> {
  const secret = await (await kube.api()).core.readNamespacedSecret({ name, namespace: kube.credentialsNamespace });
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
}

/**
 * Secrets read through a short-lived cache: executors need credentials on
 * every invocation, and a rotated credential is picked up within `ttlMs`.
 */
export class SecretCache {
  private readonly entries: LRUCache<string, Record<string, string>>;

  constructor(kube: KubeConnection, ttlMs: number, max = 1000) {
    // fetch() reads a Secret once however many invocations ask for it at the same moment.
    this.entries = new LRUCache<string, Record<string, string>>({ max, ttl: ttlMs, fetchMethod: (name) => readSecret(kube, name) });
  }

  async get(name: string): Promise<Record<string, string>> {
    return (await this.entries.fetch(name))!;
  }
}
