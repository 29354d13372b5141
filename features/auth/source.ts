import { formatIp, parseIp } from '../../infra/net/ip.js';

/**
 * The source an attempt is counted against: an IPv4 address, or an IPv6
 * address's /64, since one subscriber usually holds a whole /64 and could
 * otherwise take a fresh source for every guess. An IPv4-mapped IPv6 address
 * is its IPv4 address; anything that is not an address is taken as it is.
 */
export function sourceOf(address: string): string {
  const ip = parseIp(address);
  if (!ip) return address;
  if (ip.family === 4) return formatIp(ip);
  const mapped = ip.bytes.slice(0, 12).every((byte, i) => byte === (i < 10 ? 0 : 0xff));
  if (mapped) return formatIp({ family: 4, bytes: ip.bytes.slice(12) });
  const prefix = new Uint8Array(16);
  prefix.set(ip.bytes.slice(0, 8));
  return `${formatIp({ family: 6, bytes: prefix })}/64`;
}
