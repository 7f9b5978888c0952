import ipaddr from 'ipaddr.js';

// The IANA special-purpose address registries, as data: every entry is refused as a link-preview
// destination, whatever the registry's "globally reachable" column says (an AS112 or anycast
// relay is no web site). Kept here rather than trusting ipaddr.js's range names so that a change
// in its tables cannot quietly open a range.
//   https://www.iana.org/assignments/iana-ipv4-special-registry/
//   https://www.iana.org/assignments/iana-ipv6-special-registry/
// IPv4 multicast (224.0.0.0/4, RFC 5771) and the rest of 240.0.0.0/4 come from the address-space
// registry. IPv6 outside 2000::/3 is refused as a whole (below), which covers the registry's
// entries there (loopback, unspecified, mapped, NAT64, discard, ULA, link-local) and multicast.

/** One registry entry: `[network, prefix, name]`. */
export type SpecialRange = readonly [network: string, prefix: number, name: string];

export const IPV4_SPECIAL: readonly SpecialRange[] = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1)'],
  ['192.31.196.0', 24, 'AS112-v4'],
  ['192.52.193.0', 24, 'AMT'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['192.175.48.0', 24, 'direct delegation AS112 service'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2)'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3)'],
  ['224.0.0.0', 4, 'multicast'],
  // Before 240.0.0.0/4, which holds it: the more specific name in logs.
  ['255.255.255.255', 32, 'limited broadcast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** The entries inside 2000::/3; everything outside it is refused before these are asked. */
export const IPV6_SPECIAL: readonly SpecialRange[] = [
  ['2001::', 23, 'IETF protocol assignments'],
  ['2001:db8::', 32, 'documentation'],
  ['2620:4f:8000::', 48, 'direct delegation AS112 service'],
  ['3fff::', 20, 'documentation'],
];

type Table = ReadonlyArray<readonly [ipaddr.IPv4 | ipaddr.IPv6, number, string]>;
const V4: Table = IPV4_SPECIAL.map(([a, p, n]) => [ipaddr.IPv4.parse(a), p, n] as const);
const V6: Table = IPV6_SPECIAL.map(([a, p, n]) => [ipaddr.IPv6.parse(a), p, n] as const);

const GLOBAL_UNICAST = ipaddr.IPv6.parse('2000::');
const MAPPED = ipaddr.IPv6.parse('::ffff:0:0');
const NAT64 = ipaddr.IPv6.parse('64:ff9b::');
const SIX_TO_FOUR = ipaddr.IPv6.parse('2002::');
const TEREDO = ipaddr.IPv6.parse('2001::');

/** The 32 bits of an IPv6 address from bit `offset` on (a multiple of 16), as IPv4. */
function embeddedV4(addr: ipaddr.IPv6, offset: number, invert = false): ipaddr.IPv4 {
  const hi = addr.parts[offset / 16] as number;
  const lo = addr.parts[offset / 16 + 1] as number;
  const m = invert ? 0xff : 0;
  return new ipaddr.IPv4([(hi >> 8) ^ m, (hi & 0xff) ^ m, (lo >> 8) ^ m, (lo & 0xff) ^ m]);
}

function v4Refusal(addr: ipaddr.IPv4): string | null {
  for (const [net, prefix, name] of V4) if (addr.match(net as ipaddr.IPv4, prefix)) return name;
  return null;
}

/**
 * Why an address may not be connected to, or null when it is public. IPv6 forms carrying an
 * IPv4 address are judged by it where the packets end up there: IPv4-mapped (`::ffff:0:0/96`),
 * NAT64 `64:ff9b::/96` (DNS64 hands these out for every IPv4-only site), 6to4 `2002::/16`, and
 * Teredo `2001::/32` (its server and its de-obfuscated client must both be public). Refused
 * outright: the local-use NAT64 prefix `64:ff9b:1::/48` (the IPv4 position depends on the
 * operator's prefix length), IPv4-compatible `::a.b.c.d` and every other address outside
 * 2000::/3.
 */
export function addressRefusal(addr: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  if (addr instanceof ipaddr.IPv4) return v4Refusal(addr);
  if (addr.match(MAPPED, 96)) return v4Refusal(embeddedV4(addr, 96));
  if (addr.match(NAT64, 96)) return v4Refusal(embeddedV4(addr, 96));
  if (addr.match(SIX_TO_FOUR, 16)) return v4Refusal(embeddedV4(addr, 16));
  if (addr.match(TEREDO, 32)) {
    return v4Refusal(embeddedV4(addr, 32)) ?? v4Refusal(embeddedV4(addr, 96, true));
  }
  if (!addr.match(GLOBAL_UNICAST, 3)) return 'not global unicast';
  for (const [net, prefix, name] of V6) if (addr.match(net as ipaddr.IPv6, prefix)) return name;
  return null;
}
