import dns, { type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { InputError } from '../../kernel/errors/errors.js';
import { Cidr, embeddedIpv4, formatIp, parseIp, type IpAddress } from './ip.js';
import { OwnEndpoints, type Endpoint, type OwnAddress, type Resolver } from './own-endpoints.js';
import { normalizeHostName, parseHostPattern, patternMatchesAddress, patternMatchesName, type HostPattern } from './host-pattern.js';

export type { Endpoint, Resolver };

export interface UrlPolicyOptions {
  /** Loopback targets (127.0.0.0/8, ::1, localhost): development mode and tests only. */
  allowLoopback?: boolean;
  /** CIDRs inside which private addresses (RFC 1918, RFC 6598, IPv6 ULA) may be called; the others are refused. */
  privateAllow?: readonly string[];
  /** The platform's own endpoints: refused even inside `privateAllow`, whatever the lists say. */
  ownEndpoints?: readonly Endpoint[];
  /** When not empty, only these targets: CIDRs, addresses, host names or `*.suffix`. */
  allow?: readonly string[];
  /** Targets refused in addition to the built-in ones; same entry forms as `allow`. */
  deny?: readonly string[];
  /** The system resolver (getaddrinfo, so /etc/hosts counts) unless given. */
  resolve?: Resolver;
}

/** Raised by the policy's lookup: the host resolved to an address the policy refuses. */
export class AddressDeniedError extends Error {
  readonly code = 'ERR_ADDRESS_DENIED';

  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`Refused to connect to ${host}: ${reason}`);
    this.name = 'AddressDeniedError';
  }
}

const networks = (entries: Array<[string, string]>) => entries.map(([cidr, reason]) => ({ cidr: Cidr.parse(cidr) as Cidr, reason }));

// Never reachable through the platform, whatever the configuration says: these
// are how a request-controlled URL steals cloud credentials (SSRF).
const ALWAYS_DENIED = networks([
  ['169.254.169.254', 'a cloud metadata address'],
  ['100.100.100.200', 'a cloud metadata address'],
  ['fd00:ec2::254', 'a cloud metadata address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['fe80::/10', 'a link-local address'],
  ['0.0.0.0/8', 'an unspecified address'],
  ['::', 'an unspecified address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['ff00::/8', 'a multicast address'],
  ['240.0.0.0/4', 'a reserved or broadcast address'],
]);
// Not routable on the internet: inside a cluster or a company network, so reachable only where the operator says.
const PRIVATE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'].map((text) => Cidr.parse(text) as Cidr);
const PRIVATE_REASON = 'a private address outside the networks the platform may call';
const OWN_REASON = "one of the platform's own services";
const LOOPBACK = networks([
  ['127.0.0.0/8', 'a loopback address (allowed only in development mode)'],
  ['::1', 'a loopback address (allowed only in development mode)'],
]);
const METADATA_NAMES = ['metadata.google.internal', 'metadata.goog'];
const LOOPBACK_REASON = 'a loopback address (allowed only in development mode)';

const systemResolver: Resolver = (hostName, family) => dns.promises.lookup(hostName, { all: true, family });

/**
 * Decides which URLs the platform may call on behalf of a deployment or a
 * storage configuration. Checked when a URL is registered (`checkSyntax`, a
 * clear 400), before each request (`refusalOf`), and at connection time on the
 * addresses a name resolves to (`lookupFor`), so a name that later resolves to
 * a forbidden address (DNS rebinding) is still refused.
 */
export class UrlPolicy {
  private readonly allowLoopback: boolean;
  private readonly privateAllow: Cidr[];
  private readonly own: OwnEndpoints;
  private readonly allow: HostPattern[];
  private readonly deny: HostPattern[];
  private readonly resolve: Resolver;

  /** Throws an Error naming the entry when a list entry is malformed. */
  constructor(options: UrlPolicyOptions = {}) {
    this.allowLoopback = options.allowLoopback ?? false;
    this.privateAllow = (options.privateAllow ?? []).map(parseNetwork);
    this.allow = (options.allow ?? []).map(parseHostPattern);
    this.deny = (options.deny ?? []).map(parseHostPattern);
    this.resolve = options.resolve ?? systemResolver;
    this.own = new OwnEndpoints(options.ownEndpoints ?? [], this.resolve);
  }

  /** Parses and checks `url` as far as can be told without DNS; the InputError names `field`. Returns the parsed URL. */
  checkSyntax(url: string | URL, field = 'url'): URL {
    let parsed: URL;
    try {
      parsed = url instanceof URL ? url : new URL(url);
    } catch {
      throw new InputError(`${field} must be an absolute http or https URL`, [{ field, message: 'not a URL' }]);
    }
    const denial = this.denialOfUrl(parsed);
    if (denial) throw new InputError(`${field} is not allowed: ${denial}`, [{ field, message: denial }]);
    return parsed;
  }

  /** Why `url` may not be called, as far as can be told without DNS; null when it may. */
  denialOfUrl(url: URL): string | null {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `only http and https URLs can be called, not ${url.protocol.slice(0, -1)}`;
    if (url.username || url.password) return 'the URL contains credentials; give tokens in the *_pat parameters instead';
    const ip = parseIp(url.hostname);
    const denial = ip ? this.denialOfAddress(ip, portOf(url), [], false) : this.nameDecision(url.hostname).denial;
    return denial ? `${url.hostname} is ${denial}` : null;
  }

  /**
   * Why `url` may not be called, the platform's own endpoints included; null
   * when it may. Needed before connecting to an address literal, which node
   * connects to without a lookup.
   */
  async refusalOf(url: URL): Promise<string | null> {
    const denial = this.denialOfUrl(url);
    const ip = parseIp(url.hostname);
    if (denial || !ip) return denial;
    const own = this.ownDenial(ip, portOf(url), await this.own.addresses());
    return own ? `${url.hostname} is ${own}` : null;
  }

  /** `checkSyntax`, then the platform's own endpoints too. */
  async checkUrl(url: string | URL, field = 'url'): Promise<URL> {
    const parsed = this.checkSyntax(url, field);
    const denial = await this.refusalOf(parsed);
    if (denial) throw new InputError(`${field} is not allowed: ${denial}`, [{ field, message: denial }]);
    return parsed;
  }

  /**
   * A drop-in for `dns.lookup` (node's `net.LookupFunction`) for connections
   * to `port`: resolves the name and fails with AddressDeniedError when any
   * address it resolves to is refused.
   */
  lookupFor(port: number): LookupFunction {
    return (hostName, options, callback) => {
      this.resolveAllowed(hostName, port, familyOf(options.family)).then(
        (addresses) => {
          const first = addresses[0] as LookupAddress;
          if (options.all) callback(null, addresses);
          else callback(null, first.address, first.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, ''),
      );
    };
  }

  /** The addresses of `hostName`, all of them allowed for a connection to `port`; rejects otherwise. */
  async resolveAllowed(hostName: string, port: number, family: 0 | 4 | 6 = 0): Promise<LookupAddress[]> {
    const literal = parseIp(hostName);
    if (literal) {
      this.refuseAddress(hostName, literal, port, await this.own.addresses(), false);
      return [{ address: formatIp(literal), family: literal.family }];
    }
    const decision = this.nameDecision(hostName);
    if (decision.denial) throw new AddressDeniedError(hostName, `${hostName} is ${decision.denial}`);
    const [addresses, own] = await Promise.all([this.resolve(hostName, family), this.own.addresses()]);
    if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostName}`), { code: 'ENOTFOUND', hostname: hostName });
    for (const { address } of addresses) {
      const ip = parseIp(address);
      if (!ip) throw new AddressDeniedError(hostName, `it resolved to ${address}, which is not an IP address`);
      this.refuseAddress(hostName, ip, port, own, decision.allowedByName);
    }
    return addresses;
  }

  private refuseAddress(hostName: string, ip: IpAddress, port: number, own: OwnAddress[], allowedByName: boolean): void {
    const denial = this.denialOfAddress(ip, port, own, allowedByName);
    if (denial) throw new AddressDeniedError(hostName, `it resolves to ${formatIp(ip)}, which is ${denial}`);
  }

  /** Why the address is refused, or null. `allowedByName`: the host name already matched the allow list. */
  private denialOfAddress(ip: IpAddress, port: number, own: OwnAddress[], allowedByName: boolean): string | null {
    const embedded = embeddedIpv4(ip);
    for (const candidate of embedded ? [ip, embedded] : [ip]) {
      const denial =
        this.builtInDenial(candidate) ??
        this.ownDenial(candidate, port, own) ??
        (this.deny.some((p) => patternMatchesAddress(p, candidate)) ? 'on the deny list' : null) ??
        this.privateDenial(candidate);
      if (denial) return candidate === ip ? denial : `${denial} (${formatIp(candidate)})`;
    }
    if (this.allow.length > 0 && !allowedByName && !this.allow.some((p) => patternMatchesAddress(p, ip))) return 'not on the allow list';
    return null;
  }

  private builtInDenial(ip: IpAddress): string | null {
    const rules = this.allowLoopback ? ALWAYS_DENIED : [...ALWAYS_DENIED, ...LOOPBACK];
    return rules.find((rule) => rule.cidr.contains(ip))?.reason ?? null;
  }

  private privateDenial(ip: IpAddress): string | null {
    if (!PRIVATE.some((network) => network.contains(ip))) return null;
    return this.privateAllow.some((network) => network.contains(ip)) ? null : PRIVATE_REASON;
  }

  private ownDenial(ip: IpAddress, port: number, own: OwnAddress[]): string | null {
    return OwnEndpoints.includes(own, ip, port) ? OWN_REASON : null;
  }

  /**
   * The verdict on a host name before resolving it. An allow list made only of
   * names decides here; one with networks waits for the resolved addresses.
   */
  private nameDecision(hostName: string): { denial: string | null; allowedByName: boolean } {
    const name = normalizeHostName(hostName);
    const allowedByName = this.allow.some((p) => patternMatchesName(p, name));
    if (METADATA_NAMES.includes(name)) return { denial: 'a cloud metadata address', allowedByName };
    if (!this.allowLoopback && (name === 'localhost' || name.endsWith('.localhost'))) return { denial: LOOPBACK_REASON, allowedByName };
    if (this.deny.some((p) => patternMatchesName(p, name))) return { denial: 'on the deny list', allowedByName };
    const decidedLater = this.allow.some((p) => p.kind === 'network');
    if (this.allow.length > 0 && !allowedByName && !decidedLater) return { denial: 'not on the allow list', allowedByName };
    return { denial: null, allowedByName };
  }
}

/** The port a connection to `url` goes to. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function parseNetwork(entry: string): Cidr {
  const cidr = Cidr.parse(entry);
  if (!cidr) throw new Error(`Invalid network "${entry}": expected a CIDR such as 10.0.0.0/8`);
  return cidr;
}

function familyOf(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}
