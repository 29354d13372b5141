import net from 'node:net';

/** An IP address as its raw bytes: 4 for IPv4, 16 for IPv6. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/**
 * Parses an IPv4 or IPv6 literal (brackets and a zone id are tolerated);
 * null when `text` is not an IP address, e.g. a host name.
 */
export function parseIp(text: string): IpAddress | null {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (net.isIPv4(bare)) return { family: 4, bytes: Uint8Array.from(bare.split('.').map(Number)) };
  if (net.isIPv6(bare)) return { family: 6, bytes: ipv6Bytes(bare) };
  return null;
}

function ipv6Bytes(text: string): Uint8Array {
  const [head = '', tail] = text.split('::');
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const missing = 8 - left.length - right.length;
  const all = [...left, ...new Array<number>(missing).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((group, index) => {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  });
  return bytes;
}

/** 16-bit groups of one side of `::`; a dotted IPv4 tail counts as two groups. */
function groups(part: string): number[] {
  if (part === '') return [];
  return part.split(':').flatMap((group) => {
    if (!group.includes('.')) return [parseInt(group, 16)];
    const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
    return [(a << 8) | b, (c << 8) | d];
  });
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.');
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) parts.push((((ip.bytes[i] ?? 0) << 8) | (ip.bytes[i + 1] ?? 0)).toString(16));
  // Let the platform shorten the zero run, so the text matches what users expect.
  return new URL(`http://[${parts.join(':')}]/`).hostname.slice(1, -1);
}

/** An IPv6 prefix that carries an IPv4 address, and where (byte offset of its four bytes). */
interface Ipv4Carrier {
  readonly prefix: readonly number[];
  readonly at: number;
}

const V4_MAPPED: Ipv4Carrier = { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], at: 12 };
// SIIT's IPv4-translated form, ::ffff:0:0:0/96 (RFC 7915).
const V4_TRANSLATED: Ipv4Carrier = { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], at: 12 };
const NAT64: Ipv4Carrier = { prefix: [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], at: 12 };
// NAT64's local-use prefix 64:ff9b:1::/48 (RFC 8215), with the IPv4 address in the last 32 bits as a /96 carries it.
const NAT64_LOCAL: Ipv4Carrier = { prefix: [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], at: 12 };
// 6to4, 2002::/16 (RFC 3056): the relay tunnels to the IPv4 address in bits 16–47.
const SIX_TO_FOUR: Ipv4Carrier = { prefix: [0x20, 0x02], at: 2 };
const V4_COMPATIBLE: Ipv4Carrier = { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], at: 12 };
const CARRIERS = [V4_MAPPED, V4_TRANSLATED, NAT64, NAT64_LOCAL, SIX_TO_FOUR, V4_COMPATIBLE];

/**
 * The IPv4 address an IPv6 address carries when the network will deliver it
 * to that IPv4 host (`::ffff:a.b.c.d`, `::ffff:0:a.b.c.d`, the NAT64 prefixes,
 * 6to4, the deprecated `::a.b.c.d`). A policy that checked only the IPv6 form
 * would let `[::ffff:169.254.169.254]` through.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | null {
  if (ip.family !== 6) return null;
  for (const form of CARRIERS) {
    if (!form.prefix.every((byte, index) => ip.bytes[index] === byte)) continue;
    // `::` and `::1` share the compatible prefix but are IPv6's own unspecified and loopback addresses.
    if (form === V4_COMPATIBLE && ip.bytes[12] === 0) return null;
    return { family: 4, bytes: ip.bytes.slice(form.at, form.at + 4) };
  }
  return null;
}

/** A network in CIDR notation; a bare address is a network of one. */
export class Cidr {
  private constructor(
    readonly network: IpAddress,
    readonly prefixLength: number,
  ) {}

  /** null when `text` is not an address or a CIDR. */
  static parse(text: string): Cidr | null {
    const [address = '', prefix, extra] = text.trim().split('/');
    const ip = parseIp(address);
    if (!ip || extra !== undefined) return null;
    const max = ip.family === 4 ? 32 : 128;
    if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return null;
    const length = prefix === undefined ? max : Number(prefix);
    return length <= max ? new Cidr(ip, length) : null;
  }

  contains(ip: IpAddress): boolean {
    if (ip.family !== this.network.family) return false;
    let remaining = this.prefixLength;
    for (let i = 0; remaining > 0; i += 1, remaining -= 8) {
      const mask = remaining >= 8 ? 0xff : (0xff << (8 - remaining)) & 0xff;
      if (((ip.bytes[i] ?? 0) & mask) !== ((this.network.bytes[i] ?? 0) & mask)) return false;
    }
    return true;
  }

  toString(): string {
    return `${formatIp(this.network)}/${this.prefixLength}`;
  }
}
