import type { LookupAddress } from 'node:dns';
import { Cidr, embeddedIpv4, formatIp, parseIp, type IpAddress } from './ip.js';

/** A service the platform itself depends on (database, broker, Prometheus, …): never a target. */
export interface Endpoint {
  host: string;
  port: number;
}

/** Resolves a host name to every address it has (family 0: both). */
export type Resolver = (hostName: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

export interface OwnAddress {
  /** Its IPv4 form when it embeds one, so `::ffff:10.0.0.5` and `10.0.0.5` compare equal. */
  address: string;
  port: number;
  loopback: boolean;
}

// How long the addresses of the platform's own endpoints are trusted before they are resolved again.
const TTL_MS = 30_000;
const LOOPBACK = [Cidr.parse('127.0.0.0/8') as Cidr, Cidr.parse('::1') as Cidr];

/** The platform's own endpoints, resolved the way targets are, so a name or an address of theirs is recognised either way. */
export class OwnEndpoints {
  private cached: { until: number; addresses: Promise<OwnAddress[]> } | undefined;

  constructor(
    private readonly endpoints: readonly Endpoint[],
    private readonly resolve: Resolver,
  ) {}

  /** The current addresses, resolved again every TTL_MS; a name that does not resolve counts for nothing. */
  addresses(): Promise<OwnAddress[]> {
    if (this.endpoints.length === 0) return Promise.resolve([]);
    const now = Date.now();
    if (!this.cached || this.cached.until <= now) {
      const addresses = Promise.all(this.endpoints.map((endpoint) => this.addressesOf(endpoint))).then((all) => all.flat());
      this.cached = { until: now + TTL_MS, addresses };
    }
    return this.cached.addresses;
  }

  /**
   * One machine serves many things on loopback, so an own endpoint there is
   * matched on its port only; anywhere else on its whole address, as the
   * service's other ports (a broker's management API) are no safer.
   */
  static includes(own: readonly OwnAddress[], ip: IpAddress, port: number): boolean {
    const address = formatIp(embeddedIpv4(ip) ?? ip);
    return own.some((endpoint) => endpoint.address === address && (endpoint.port === port || !endpoint.loopback));
  }

  private async addressesOf({ host, port }: Endpoint): Promise<OwnAddress[]> {
    const literal = parseIp(host);
    const resolved = literal ? [formatIp(literal)] : (await this.resolve(host, 0).catch((): LookupAddress[] => [])).map((entry) => entry.address);
    return resolved.flatMap((text) => {
      const parsed = parseIp(text);
      if (!parsed) return [];
      const ip = embeddedIpv4(parsed) ?? parsed;
      return [{ address: formatIp(ip), port, loopback: LOOPBACK.some((network) => network.contains(ip)) }];
    });
  }
}
