import ipaddr from 'ipaddr.js';

import { Lru } from './lru.js';
import { addressRefusal } from './special-addresses.js';

// Address parsing is deliberately stricter than ipaddr.js: it takes only dotted-quad decimal IPv4
// (no `10.1`, `0x7f.1` or leading zeros, which other tools read as octal) and IPv6 without a zone
// id, so the deny list, the rate-limit key and the SSRF check all agree on what an address is.

/** An IPv4 or IPv6 address as ipaddr.js models it. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const IPV6_TAIL_V4 = new RegExp(`^([0-9a-fA-F:]*:)(${OCTET}(?:\\.${OCTET}){3})$`);
const IPV6_CHARS = /^[0-9a-fA-F:]+$/;
const PREFIX = /^(?:0|[1-9]\d{0,2})$/;
// The longest IPv6 text: six groups and a dotted quad.
const MAX_ADDRESS_LENGTH = 45;

/** Parses without unwrapping IPv4-mapped IPv6, so a CIDR can tell `::ffff:0:0/95` apart. */
function parseExact(input: string): IpAddress | null {
  if (input.length === 0 || input.length > MAX_ADDRESS_LENGTH) return null;
  if (IPV4.test(input)) return new ipaddr.IPv4(input.split('.').map(Number));
  let text = input;
  // ipaddr.js reads `::1.2.3.4` as IPv4-mapped and lets odd octets through in the dotted tail;
  // rewriting the tail as two hex groups keeps the address what it says it is.
  const tail = IPV6_TAIL_V4.exec(input);
  if (tail) {
    const [a, b, c, d] = (tail[2] as string).split('.').map(Number) as [
      number,
      number,
      number,
      number,
    ];
    text = `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  if (!IPV6_CHARS.test(text) || !ipaddr.IPv6.isValid(text)) return null;
  return ipaddr.IPv6.parse(text);
}

function isMapped(addr: ipaddr.IPv6): boolean {
  const p = addr.parts;
  return p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff;
}

/** The 32 bits of an IPv6 address from bit `offset` on (a multiple of 16), as IPv4. */
function embeddedV4(addr: ipaddr.IPv6, offset: number, invert = false): ipaddr.IPv4 {
  const hi = addr.parts[offset / 16] as number;
  const lo = addr.parts[offset / 16 + 1] as number;
  const mask = invert ? 0xff : 0;
  return new ipaddr.IPv4([
    (hi >> 8) ^ mask,
    (hi & 0xff) ^ mask,
    (lo >> 8) ^ mask,
    (lo & 0xff) ^ mask,
  ]);
}

/** Parses an address; an IPv4-mapped IPv6 address comes back as its IPv4 address. */
export function parseAddress(input: string): IpAddress | null {
  if (typeof input !== 'string') return null;
  const addr = parseExact(input);
  if (addr instanceof ipaddr.IPv6 && isMapped(addr)) return embeddedV4(addr, 96);
  return addr;
}

function maskBytes(bytes: number[], prefix: number): number[] {
  return bytes.map((byte, i) => {
    const keep = Math.min(8, Math.max(0, prefix - i * 8));
    return byte & ((0xff00 >> keep) & 0xff);
  });
}

/**
 * Parses an address or CIDR into canonical `network/prefix` text. A bare address becomes a /32 or
 * /128. Host bits are cleared rather than refused (`10.1.2.3/8` -> `10.0.0.0/8`): an operator who
 * types a host inside the range they mean gets that range, and two spellings of one range compare
 * equal. An IPv4-mapped range (`::ffff:a.b.c.d/96` or longer) becomes the IPv4 range, because
 * clients are matched after unwrapping; a shorter prefix stays IPv6. Null when malformed.
 */
export function normalizeCidr(input: string): { cidr: string; family: 4 | 6 } | null {
  if (typeof input !== 'string') return null;
  const slash = input.indexOf('/');
  const addrText = slash === -1 ? input : input.slice(0, slash);
  const prefixText = slash === -1 ? null : input.slice(slash + 1);
  if (prefixText !== null && !PREFIX.test(prefixText)) return null;
  let addr = parseExact(addrText);
  if (!addr) return null;
  const bits = addr instanceof ipaddr.IPv4 ? 32 : 128;
  let prefix = prefixText === null ? bits : Number(prefixText);
  if (prefix > bits) return null;
  if (addr instanceof ipaddr.IPv6 && isMapped(addr) && prefix >= 96) {
    addr = embeddedV4(addr, 96);
    prefix -= 96;
  }
  const network = ipaddr.fromByteArray(maskBytes(addr.toByteArray(), prefix));
  return {
    cidr: `${network.toString()}/${prefix}`,
    family: network instanceof ipaddr.IPv4 ? 4 : 6,
  };
}

function splitCidr(cidr: string): { network: IpAddress; prefix: number } | null {
  const normal = normalizeCidr(cidr);
  if (!normal) return null;
  const slash = normal.cidr.indexOf('/');
  return {
    network: parseExact(normal.cidr.slice(0, slash)) as IpAddress,
    prefix: Number(normal.cidr.slice(slash + 1)),
  };
}

/** Whether the address lies in the range; false when either is malformed or families differ. */
export function cidrContains(cidr: string, address: string): boolean {
  const range = splitCidr(cidr);
  const addr = parseAddress(address);
  if (!range || !addr || range.network.kind() !== addr.kind()) return false;
  return addr.match(range.network, range.prefix);
}

function v4Number(addr: ipaddr.IPv4): number {
  const [a, b, c, d] = addr.octets as [number, number, number, number];
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function v6BigInt(addr: ipaddr.IPv6): bigint {
  let n = 0n;
  for (const part of addr.parts) n = (n << 16n) | BigInt(part);
  return n;
}

const V4_ALL = 0xffffffff;
const V6_ALL = (1n << 128n) - 1n;
const v4Mask = (prefix: number): number => (prefix === 0 ? 0 : (V4_ALL << (32 - prefix)) >>> 0);
const v6Mask = (prefix: number): bigint => V6_ALL ^ ((1n << BigInt(128 - prefix)) - 1n);

/**
 * A set of ranges asked on every request (the operator's IP deny list). Ranges are grouped by
 * family and prefix length, each group a Set of masked networks, so a lookup costs one mask and
 * one hash probe per distinct prefix length present (at most 33 + 129), not one per range.
 */
export class CidrSet {
  private readonly v4: { mask: number; networks: Set<number> }[];
  private readonly v6: { mask: bigint; networks: Set<bigint> }[];

  /**
   * Throws on an entry that is not an address or CIDR: a list that dropped one silently would
   * let through the addresses it was meant to block.
   */
  constructor(cidrs: Iterable<string>) {
    const v4 = new Map<number, Set<number>>();
    const v6 = new Map<number, Set<bigint>>();
    for (const cidr of cidrs) {
      const range = splitCidr(cidr);
      if (!range) throw new TypeError(`not an IP address or CIDR range: ${JSON.stringify(cidr)}`);
      const { network, prefix } = range;
      if (network instanceof ipaddr.IPv4) {
        const group = v4.get(prefix) ?? new Set<number>();
        group.add(v4Number(network));
        v4.set(prefix, group);
      } else {
        const group = v6.get(prefix) ?? new Set<bigint>();
        group.add(v6BigInt(network));
        v6.set(prefix, group);
      }
    }
    this.v4 = [...v4].map(([prefix, networks]) => ({ mask: v4Mask(prefix), networks }));
    this.v6 = [...v6].map(([prefix, networks]) => ({ mask: v6Mask(prefix), networks }));
  }

  /** Distinct ranges held, after normalizing (for logs and metrics). */
  get size(): number {
    let n = 0;
    for (const g of this.v4) n += g.networks.size;
    for (const g of this.v6) n += g.networks.size;
    return n;
  }

  /** Whether the address is in any range; a malformed address is in none. */
  has(address: string): boolean {
    // The usual deny list is empty: no address to parse for it, on every request.
    if (this.v4.length === 0 && this.v6.length === 0) return false;
    const addr = parseAddress(address);
    if (!addr) return false;
    if (addr instanceof ipaddr.IPv4) {
      const n = v4Number(addr);
      return this.v4.some((g) => g.networks.has((n & g.mask) >>> 0));
    }
    if (this.v6.length === 0) return false;
    const n = v6BigInt(addr);
    return this.v6.some((g) => g.networks.has(n & g.mask));
  }
}

/**
 * The key one client's requests are counted under: an IPv4 address as is, an IPv6 address by its
 * /64, since one subscriber usually holds a whole /64 and could otherwise rotate through it.
 * Input that is not an address is returned unchanged so it still gets a bucket of its own.
 */
export function rateLimitKey(address: string): string {
  const addr = parseAddress(address);
  if (!addr) return address;
  if (addr instanceof ipaddr.IPv4) return addr.toString();
  const [a, b, c, d] = addr.parts as [number, number, number, number];
  return `${new ipaddr.IPv6([a, b, c, d, 0, 0, 0, 0]).toString()}/64`;
}

/** Splits on `sep` outside double quotes (RFC 7230 quoted-string, with backslash escapes). */
function splitUnquoted(text: string, sep: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted && ch === '\\' && i + 1 < text.length) {
      current += ch + (text[i + 1] as string);
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
      current += ch;
    } else if (ch === sep && !quoted) {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out;
}

function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}

/**
 * A node as a proxy writes it: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`,
 * `[2001:db8::1]:4711`, or a bare IPv6 address (X-Forwarded-For). `unknown`, obfuscated names
 * (`_hidden`) and anything else answer null.
 */
function parseNode(node: string): IpAddress | null {
  const text = node.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) {
    const addr = parseAddress(bracketed[1] as string);
    // Brackets hold an IPv6 address; an IPv4-mapped one is still fine once unwrapped.
    return addr && bracketed[1]?.includes(':') ? addr : null;
  }
  const v4WithPort = /^([\d.]+):\d{1,5}$/.exec(text);
  if (v4WithPort) return parseAddress(v4WithPort[1] as string);
  return parseAddress(text);
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.trim() === '' ? null : text;
}

/** The `for=` node of the last element of a Forwarded header, or null. */
function forwardedFor(header: string): IpAddress | null {
  const elements = splitUnquoted(header, ',');
  const last = elements[elements.length - 1] as string;
  const nodes = splitUnquoted(last, ';').flatMap((pair) => {
    const eq = pair.indexOf('=');
    return eq !== -1 && pair.slice(0, eq).trim().toLowerCase() === 'for'
      ? [unquote(pair.slice(eq + 1).trim())]
      : [];
  });
  // RFC 7239 allows one `for` per element; two leave it unclear which one the proxy wrote.
  return nodes.length === 1 ? parseNode(nodes[0] as string) : null;
}

/**
 * Canonical texts of recent TCP peers. A connection's peer is the same text for each of its
 * requests, and parsing it was about 12,000 instructions of every request (bench
 * `instructions`); the texts come from the kernel, one per client address, and the last 4,096
 * are kept.
 */
const peers = new Lru<string, string>(4096);

/** `peer` as canonical text (IPv4-mapped IPv6 unwrapped), or as it is when it is no address. */
function canonicalPeer(peer: string): string {
  let text = peers.get(peer);
  if (text === undefined) {
    text = parseAddress(peer)?.toString() ?? peer;
    peers.set(peer, text);
  }
  return text;
}

/**
 * The client address a request is limited and blocked by. Without `trustForwarded` it is the TCP
 * peer. With it, the client is read from the LAST element of `Forwarded` (RFC 7239), or when that
 * header is absent from the LAST entry of `X-Forwarded-For`: each proxy appends to the end, so
 * the last entry is the one our trusted proxy wrote, while everything before it came from the
 * client and may be forged. A Forwarded header that is present wins even when its last element
 * names no usable address (`unknown`, `_obfuscated`, garbage), and the answer is then the peer:
 * falling through to X-Forwarded-For would let a client pick its address when the proxy writes
 * Forwarded. The proxy must therefore overwrite or drop a client's Forwarded header if it only
 * writes X-Forwarded-For itself. Output is canonical text, IPv4-mapped IPv6 unwrapped; an empty
 * string when there is no peer (a socket already gone).
 */
export function clientAddress(opts: {
  peer: string | undefined;
  trustForwarded: boolean;
  forwarded?: string | string[];
  xForwardedFor?: string | string[];
}): string {
  const peer = opts.peer === undefined ? '' : canonicalPeer(opts.peer);
  if (!opts.trustForwarded) return peer;
  const forwarded = headerText(opts.forwarded);
  if (forwarded !== null) return forwardedFor(forwarded)?.toString() ?? peer;
  const xff = headerText(opts.xForwardedFor);
  if (xff === null) return peer;
  const entries = xff.split(',');
  return parseNode(entries[entries.length - 1] as string)?.toString() ?? peer;
}

/**
 * Whether a link preview may connect to the address: only global unicast outside every IANA
 * special-purpose range (`special-addresses.ts`, which says how IPv6 forms embedding IPv4 are
 * judged). Malformed input, the spellings this module refuses (`0x7f.1`, `2130706433`) and zone
 * ids are not public.
 */
export function isPublicAddress(address: string): boolean {
  const addr = parseExact(address);
  return addr !== null && addressRefusal(addr) === null;
}
