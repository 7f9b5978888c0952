import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';

import { addressRefusal, IPV4_SPECIAL, IPV6_SPECIAL } from './special-addresses.js';

const refusal = (text: string) => addressRefusal(ipaddr.parse(text));

/** The first and last address of a range. */
function ends(network: string, prefix: number): [string, string] {
  const [first, last] = [
    ipaddr.parseCIDR(`${network}/${prefix}`),
    ipaddr.parse(network).toByteArray(),
  ] as const;
  const bytes = last.slice();
  for (let bit = prefix; bit < bytes.length * 8; bit++) {
    const i = Math.floor(bit / 8);
    bytes[i] = (bytes[i] as number) | (0x80 >> (bit % 8));
  }
  return [first[0].toString(), ipaddr.fromByteArray(bytes).toString()];
}

describe('addressRefusal', () => {
  it.each([...IPV4_SPECIAL, ...IPV6_SPECIAL])(
    '%s/%s (%s): both ends refused',
    (net, prefix, name) => {
      // Teredo inside 2001::/23 is named by its embedded addresses.
      for (const addr of ends(net, prefix)) expect(refusal(addr), name).not.toBeNull();
    },
  );

  it.each([
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['64:ff9b:1::808:808', 'not global unicast'],
    ['::7f00:1', 'not global unicast'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2001:0:808:808::80ff:fffe', 'loopback'],
    ['2001:0:7f00:1::f7f7:f7f7', 'loopback'],
    ['::1', 'not global unicast'],
    ['::', 'not global unicast'],
    ['fe80::1', 'not global unicast'],
    ['fd00::1', 'not global unicast'],
    ['ff02::1', 'not global unicast'],
    ['100::1', 'not global unicast'],
    ['5f00::1', 'not global unicast'],
  ])('%s is refused as %s', (addr, name) => {
    expect(refusal(addr)).toBe(name);
  });

  it.each([
    '93.184.216.34',
    '151.101.1.1',
    '8.8.8.8',
    '100.63.255.255',
    '100.128.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:0:808:808::f7f7:f7f7',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
  ])('%s is public', (addr) => {
    expect(refusal(addr)).toBeNull();
  });
});
