import { Cidr, embeddedIpv4, type IpAddress } from './ip.js';

/** One entry of an allow or deny list: a network, an exact host name, or `*.suffix`. */
export type HostPattern =
  | { kind: 'network'; cidr: Cidr; text: string }
  | { kind: 'name'; name: string; text: string }
  | { kind: 'suffix'; suffix: string; text: string };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Lower case, without the trailing dot of a fully qualified name: how names are compared. */
export function normalizeHostName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** Throws an Error naming the entry when it is neither a CIDR, an address, a host name nor `*.suffix`. */
export function parseHostPattern(entry: string): HostPattern {
  const text = entry.trim();
  const cidr = Cidr.parse(text);
  if (cidr) return { kind: 'network', cidr, text };
  const wildcard = text.startsWith('*.');
  const name = normalizeHostName(wildcard ? text.slice(2) : text);
  if (!HOST_NAME.test(name)) {
    throw new Error(`Invalid host pattern "${entry}": expected a CIDR (10.0.0.0/8), an address, a host name or *.suffix`);
  }
  return wildcard ? { kind: 'suffix', suffix: name, text } : { kind: 'name', name, text };
}

/** `*.example.com` matches the names below example.com, not example.com itself. */
export function patternMatchesName(pattern: HostPattern, hostName: string): boolean {
  const name = normalizeHostName(hostName);
  if (pattern.kind === 'name') return name === pattern.name;
  if (pattern.kind === 'suffix') return name.endsWith(`.${pattern.suffix}`);
  return false;
}

/** Networks also match the IPv4 address an IPv6 address embeds (`::ffff:10.0.0.1` is in 10.0.0.0/8). */
export function patternMatchesAddress(pattern: HostPattern, ip: IpAddress): boolean {
  if (pattern.kind !== 'network') return false;
  const v4 = embeddedIpv4(ip);
  return pattern.cidr.contains(ip) || (v4 !== null && pattern.cidr.contains(v4));
}
