import dns, { type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { InputError } from '../../kernel/errors/errors.js';
import { Cidr, embeddedIpv4, formatIp, parseIp, type IpAddress } from './ip.js';
import { normalizeHostName, parseHostPattern, patternMatchesAddress, patternMatchesName, type HostPattern } from './host-pattern.js';

/** Resolves a host name to every address it has (family 0: both). */
export type Resolver = (hostName: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

export interface UrlPolicyOptions {
  /** Loopback targets (127.0.0.0/8, ::1, localhost): development mode and tests only. */
  allowLoopback?: boolean;
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
]);
const LOOPBACK = networks([
  ['127.0.0.0/8', 'a loopback address (allowed only in development mode)'],
  ['::1', 'a loopback address (allowed only in development mode)'],
]);
const METADATA_NAMES = ['metadata.google.internal', 'metadata.goog'];
const LOOPBACK_REASON = 'a loopback address (allowed only in development mode)';

const systemResolver: Resolver = (hostName, family) => dns.promises.lookup(hostName, { all: true, family });

/**
 * Decides which URLs the platform may call on behalf of a deployment. Checked
 * twice: `checkSyntax` when a URL is registered (clear 400), and `lookup` at
 * connection time on the addresses a name resolves to, so a name that later
 * resolves to a forbidden address (DNS rebinding) is still refused.
 */
export class UrlPolicy {
  private readonly allowLoopback: boolean;
  private readonly allow: HostPattern[];
  private readonly deny: HostPattern[];
  private readonly resolve: Resolver;

  /** Throws an Error naming the entry when an allow or deny entry is malformed. */
  constructor(options: UrlPolicyOptions = {}) {
    this.allowLoopback = options.allowLoopback ?? false;
    this.allow = (options.allow ?? []).map(parseHostPattern);
    this.deny = (options.deny ?? []).map(parseHostPattern);
    this.resolve = options.resolve ?? systemResolver;
  }

  /** Parses and checks `url`; the InputError names `field`. Returns the parsed URL. */
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
    const denial = ip ? this.denialOfAddress(ip, false) : this.nameDecision(url.hostname).denial;
    return denial ? `${url.hostname} is ${denial}` : null;
  }

  /**
   * A drop-in for `dns.lookup` (node's `net.LookupFunction`): resolves the name
   * and fails with AddressDeniedError when any address it resolves to is refused.
   */
  readonly lookup: LookupFunction = (hostName, options, callback) => {
    this.resolveAllowed(hostName, familyOf(options.family)).then(
      (addresses) => {
        const first = addresses[0] as LookupAddress;
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };

  /** The addresses of `hostName`, all of them allowed; rejects otherwise. */
  async resolveAllowed(hostName: string, family: 0 | 4 | 6 = 0): Promise<LookupAddress[]> {
    const literal = parseIp(hostName);
    if (literal) {
      this.refuseAddress(hostName, literal, false);
      return [{ address: formatIp(literal), family: literal.family }];
    }
    const decision = this.nameDecision(hostName);
    if (decision.denial) throw new AddressDeniedError(hostName, `${hostName} is ${decision.denial}`);
    const addresses = await this.resolve(hostName, family);
    if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostName}`), { code: 'ENOTFOUND', hostname: hostName });
    for (const { address } of addresses) {
      const ip = parseIp(address);
      if (!ip) throw new AddressDeniedError(hostName, `it resolved to ${address}, which is not an IP address`);
      this.refuseAddress(hostName, ip, decision.allowedByName);
    }
    return addresses;
  }

  private refuseAddress(hostName: string, ip: IpAddress, allowedByName: boolean): void {
    const denial = this.denialOfAddress(ip, allowedByName);
    if (denial) throw new AddressDeniedError(hostName, `it resolves to ${formatIp(ip)}, which is ${denial}`);
  }

  /** Why the address is refused, or null. `allowedByName`: the host name already matched the allow list. */
  private denialOfAddress(ip: IpAddress, allowedByName: boolean): string | null {
    const embedded = embeddedIpv4(ip);
    for (const candidate of embedded ? [ip, embedded] : [ip]) {
      const denial = this.builtInDenial(candidate) ?? (this.deny.some((p) => patternMatchesAddress(p, candidate)) ? 'on the deny list' : null);
      if (denial) return candidate === ip ? denial : `${denial} (${formatIp(candidate)})`;
    }
    if (this.allow.length > 0 && !allowedByName && !this.allow.some((p) => patternMatchesAddress(p, ip))) return 'not on the allow list';
    return null;
  }

  private builtInDenial(ip: IpAddress): string | null {
    const rules = this.allowLoopback ? ALWAYS_DENIED : [...ALWAYS_DENIED, ...LOOPBACK];
    return rules.find((rule) => rule.cidr.contains(ip))?.reason ?? null;
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

function familyOf(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}
