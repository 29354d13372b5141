import type { KubeConnection } from './connection.js';

/** The decoded data of a Secret. */
export async function readSecret(kube: KubeConnection, name: string): Promise<Record<string, string>> {
  const secret = await (await kube.api()).core.readNamespacedSecret({ name, namespace: kube.namespace });
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
}

/**
 * Secrets read through a short-lived cache: executors need credentials on
 * every invocation, and a rotated credential is picked up within `ttlMs`.
 */
export class SecretCache {
  private readonly entries = new Map<string, { data: Record<string, string>; until: number }>();

  constructor(
    private readonly kube: KubeConnection,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(name: string): Promise<Record<string, string>> {
    const cached = this.entries.get(name);
    if (cached && cached.until > this.now()) return cached.data;
    const data = await readSecret(this.kube, name);
    this.entries.set(name, { data, until: this.now() + this.ttlMs });
    return data;
  }
}
