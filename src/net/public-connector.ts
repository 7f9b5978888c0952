import dns from 'node:dns';
import type { Socket } from 'node:net';

import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

import { addressRefusal } from '../lib/special-addresses.js';

/** Resolves a host name to every address it has (`dns.lookup` by default: the system resolver). */
export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** A destination that failed the address check; the connect step's error. */
export class RefusedAddressError extends Error {
  readonly code = 'SVC_REFUSED_ADDRESS';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(`refused ${host} (${address}): ${range}`);
  }
}

export const systemResolve: Resolve = (hostname) =>
  dns.promises.lookup(hostname, { all: true, verbatim: true });

// A character no IPv4 form has (decimal, octal, hex): with no colon (every IPv6 form has one),
// such a host is a name. ipaddr.js's isValid finds that out by throwing and catching an Error,
// which costs more than the rest of the connect step.
const NOT_IPV4 = /[^0-9a-fA-FxX.]/;

/** The address a URL host names literally (WHATWG already turned `0x7f.1` into `127.0.0.1`). */
export function literalAddress(hostname: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (!bare.includes(':') && NOT_IPV4.test(bare)) return null;
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : null;
}

/** Why an address is refused (its special-use range), or null for a public address. */
export function refusal(address: string): string | null {
  return ipaddr.isValid(address) ? addressRefusal(ipaddr.parse(address)) : 'not an address';
}

export interface PublicConnectOptions {
  /** Connect timeout. */
  timeoutMs: number;
  /** The resolver (tests point it at their own DNS server); default the system's. */
  resolve?: Resolve;
  /** Connect to any address (development and tests only): no resolution, no check. */
  allowPrivate?: boolean;
}

/**
 * The connect step of every connection this server opens to a host someone else named (link
 * previews, push services, federation peers), for an undici `Agent`: resolve the name itself,
 * refuse it when any answer is special-use (it shows the name is aimed inward), connect to the
 * checked address with the name kept for TLS (SNI and certificate), then check the socket's peer
 * once more. So the check is made on the address actually connected to, at connect time, and a
 * second DNS answer cannot be slipped in (DNS rebinding). Refusals are `RefusedAddressError`.
 */
export function publicConnect(options: PublicConnectOptions): buildConnector.connector {
  const connect = buildConnector({ timeout: options.timeoutMs });
  const resolve = options.resolve ?? systemResolve;
  const open = (opts: buildConnector.Options) =>
    new Promise<Socket>((done, fail) => {
      connect(opts, (err, sock) => (err ? fail(err) : done(sock as unknown as Socket)));
    });
  const checked = async (opts: buildConnector.Options): Promise<Socket> => {
    if (options.allowPrivate) return open(opts);
    const host = opts.hostname;
    const literal = literalAddress(host);
    let address: string;
    if (literal) {
      address = literal.toString();
    } else {
      const answers = await resolve(host);
      if (answers.length === 0) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
      for (const a of answers) {
        const range = refusal(a.address);
        if (range) throw new RefusedAddressError(host, a.address, range);
      }
      address = (answers[0] as { address: string }).address;
    }
    const range = refusal(address);
    if (range) throw new RefusedAddressError(host, address, range);
    const socket = await open({
      ...opts,
      hostname: address,
      host: address,
      servername: literal ? undefined : (opts.servername ?? host),
    });
    const peer = socket.remoteAddress ?? '';
    const peerRange = refusal(peer);
    if (peerRange) {
      socket.destroy();
      throw new RefusedAddressError(host, peer, peerRange);
    }
    return socket;
  };
  return (opts, callback) => {
    checked(opts).then(
      (socket) => callback(null, socket),
      (err: Error) => callback(err, null),
    );
  };
}
