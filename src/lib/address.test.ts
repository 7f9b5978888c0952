import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';

import {
  CidrSet,
  cidrContains,
  clientAddress,
  isPublicAddress,
  normalizeCidr,
  parseAddress,
  rateLimitKey,
} from './address.js';

describe('normalizeCidr', () => {
  it.each([
    ['10.0.0.0/8', '10.0.0.0/8', 4],
    ['10.1.2.3/8', '10.0.0.0/8', 4],
    ['192.168.1.77/24', '192.168.1.0/24', 4],
    ['172.31.255.255/12', '172.16.0.0/12', 4],
    ['1.2.3.4', '1.2.3.4/32', 4],
    ['1.2.3.4/32', '1.2.3.4/32', 4],
    ['1.2.3.4/0', '0.0.0.0/0', 4],
    ['255.255.255.255/31', '255.255.255.254/31', 4],
    ['::1', '::1/128', 6],
    ['::', '::/128', 6],
    ['::/0', '::/0', 6],
    ['2001:DB8::1/32', '2001:db8::/32', 6],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1/128', 6],
    ['2001:db8:1:2:3:4:5:6/64', '2001:db8:1:2::/64', 6],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1/128', 6],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1/128', 6],
    ['fe80::1/10', 'fe80::/10', 6],
    ['2001:db8::1/127', '2001:db8::/127', 6],
    ['::ffff:1.2.3.4', '1.2.3.4/32', 4],
    ['::ffff:0102:0304', '1.2.3.4/32', 4],
    ['::FFFF:10.9.8.7/104', '10.0.0.0/8', 4],
    ['::ffff:0:0/96', '0.0.0.0/0', 4],
    ['::ffff:0:0/95', '::fffe:0:0/95', 6],
    ['::1.2.3.4', '::102:304/128', 6],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221/128', 6],
  ])('%s -> %s', (input, cidr, family) => {
    expect(normalizeCidr(input)).toEqual({ cidr, family });
  });

  it.each([
    '',
    ' ',
    ' 10.0.0.0/8',
    '10.0.0.0/8 ',
    '10.0.0.0 /8',
    '256.0.0.0',
    '1.2.3',
    '10',
    '10.1',
    '0x7f.0.0.1',
    '010.0.0.1',
    '1.2.3.4.5',
    '1.2.3.-4',
    '10.0.0.0/33',
    '10.0.0.0/-1',
    '10.0.0.0/',
    '10.0.0.0/08',
    '10.0.0.0/8/8',
    '/8',
    '::1/129',
    'fe80::1%eth0',
    'fe80::1%eth0/64',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    '12345::',
    ':1:2:3:4:5:6:7',
    '::ffff:1.2.3.256',
    '::ffff:01.2.3.4',
    '[::1]',
    'example.com',
    'g::1',
  ])('refuses %j', (input) => {
    expect(normalizeCidr(input)).toBeNull();
  });
});

describe('parseAddress', () => {
  it.each([
    ['1.2.3.4', 'ipv4', '1.2.3.4'],
    ['::ffff:1.2.3.4', 'ipv4', '1.2.3.4'],
    ['::ffff:7f00:1', 'ipv4', '127.0.0.1'],
    ['2001:DB8::1', 'ipv6', '2001:db8::1'],
    ['::1', 'ipv6', '::1'],
  ])('%s is %s %s', (input, kind, text) => {
    const addr = parseAddress(input);
    expect(addr?.kind()).toBe(kind);
    expect(addr?.toString()).toBe(text);
  });

  it.each(['', '1.2.3.4/32', '1.2.3', 'fe80::1%1', 'localhost', ' 1.2.3.4'])(
    'refuses %j',
    (input) => {
      expect(parseAddress(input)).toBeNull();
    },
  );
});

describe('cidrContains', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['10.1.2.3/8', '10.200.0.1', true],
    ['0.0.0.0/0', '203.0.113.9', true],
    ['0.0.0.0/0', '2001:db8::1', false],
    ['1.2.3.4', '1.2.3.4', true],
    ['1.2.3.4', '1.2.3.5', false],
    ['10.0.0.0/8', '::ffff:10.0.0.1', true],
    ['::ffff:10.0.0.0/104', '10.1.1.1', true],
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['2001:db8::/32', '2001:db9::1', false],
    ['::/0', '1.2.3.4', false],
    ['bad', '1.2.3.4', false],
    ['10.0.0.0/8', 'bad', false],
  ])('%s contains %s: %s', (cidr, address, expected) => {
    expect(cidrContains(cidr, address)).toBe(expected);
  });
});

describe('CidrSet', () => {
  const set = new CidrSet([
    '10.0.0.0/8',
    '192.168.1.7',
    '203.0.113.0/25',
    '2001:db8::/32',
    '2001:db8:1::/48',
    '2a00:1::1',
  ]);

  it.each([
    ['10.2.3.4', true],
    ['11.2.3.4', false],
    ['192.168.1.7', true],
    ['192.168.1.8', false],
    ['203.0.113.127', true],
    ['203.0.113.128', false],
    ['::ffff:10.0.0.1', true],
    ['2001:db8:5::1', true],
    ['2001:db9::1', false],
    ['2a00:1::1', true],
    ['2a00:1::2', false],
    ['not an address', false],
    ['', false],
  ])('%s: %s', (address, expected) => {
    expect(set.has(address)).toBe(expected);
  });

  it('counts distinct networks', () => {
    expect(new CidrSet(['10.1.2.3/8', '10.0.0.0/8', '::ffff:10.0.0.0/104']).size).toBe(1);
  });

  it('matches everything with a /0 and nothing when empty', () => {
    expect(new CidrSet(['0.0.0.0/0']).has('8.8.8.8')).toBe(true);
    expect(new CidrSet(['0.0.0.0/0']).has('2001:db8::1')).toBe(false);
    expect(new CidrSet(['::/0']).has('2001:db8::1')).toBe(true);
    expect(new CidrSet([]).has('8.8.8.8')).toBe(false);
  });

  it('refuses a malformed entry rather than dropping it', () => {
    expect(() => new CidrSet(['10.0.0.0/8', '10.0.0.0/40'])).toThrow(TypeError);
  });

  it('agrees with a linear scan over a few thousand ranges', () => {
    const cidrs: string[] = [];
    for (let i = 0; i < 3000; i++) {
      cidrs.push(`${(i * 7) % 223}.${(i * 13) % 256}.${i % 256}.0/${16 + (i % 17)}`);
      cidrs.push(`2001:db8:${(i * 7).toString(16)}:${i.toString(16)}::/${32 + (i % 97)}`);
    }
    const ranges = cidrs.map((c) => ipaddr.parseCIDR(c));
    const many = new CidrSet(cidrs);
    for (let i = 0; i < 300; i++) {
      for (const address of [
        `${(i * 7) % 223}.${(i * 13) % 256}.${(i * 3) % 256}.${i % 256}`,
        `2001:db8:${(i * 7).toString(16)}:${i.toString(16)}::${(i * 5).toString(16)}`,
      ]) {
        const addr = ipaddr.parse(address);
        const expected = ranges.some(
          ([net, prefix]) => net.kind() === addr.kind() && addr.match(net, prefix),
        );
        expect(many.has(address)).toBe(expected);
      }
    }
  });
});

describe('rateLimitKey', () => {
  it.each([
    ['1.2.3.4', '1.2.3.4'],
    ['::ffff:1.2.3.4', '1.2.3.4'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['2001:DB8:0001:0002:aaaa::1', '2001:db8:1:2::/64'],
    ['::1', '::/64'],
    ['not an address', 'not an address'],
  ])('%s -> %s', (address, key) => {
    expect(rateLimitKey(address)).toBe(key);
  });
});

describe('clientAddress', () => {
  const peer = '10.0.0.2';
  it('answers a peer seen before as the first time, past the number of peers kept', () => {
    const cases: Array<[string, string]> = [
      ['::ffff:10.0.0.2', '10.0.0.2'],
      ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
      ['not an address', 'not an address'],
      ['010.0.0.1', '010.0.0.1'],
    ];
    for (let round = 0; round < 3; round += 1) {
      for (const [given, canonical] of cases) {
        expect(clientAddress({ peer: given, trustForwarded: false })).toBe(canonical);
      }
      // More distinct peers than are kept (4,096), each answered for itself.
      for (let i = 0; i < 5000; i += 1) {
        const given = `::ffff:10.${(i >> 8) & 255}.${i & 255}.${round}`;
        expect(clientAddress({ peer: given, trustForwarded: false })).toBe(
          `10.${(i >> 8) & 255}.${i & 255}.${round}`,
        );
      }
    }
  });
  it.each<[string, Partial<Parameters<typeof clientAddress>[0]>, string]>([
    ['peer when not trusting headers', { trustForwarded: false, xForwardedFor: '1.1.1.1' }, peer],
    ['peer unwrapped', { peer: '::ffff:10.0.0.2', trustForwarded: false }, peer],
    ['peer without headers', { trustForwarded: true }, peer],
    ['XFF single', { trustForwarded: true, xForwardedFor: '198.51.100.7' }, '198.51.100.7'],
    [
      'XFF last entry',
      { trustForwarded: true, xForwardedFor: '6.6.6.6, 198.51.100.7' },
      '198.51.100.7',
    ],
    [
      'XFF repeated headers',
      { trustForwarded: true, xForwardedFor: ['6.6.6.6', '198.51.100.7'] },
      '198.51.100.7',
    ],
    ['XFF with port', { trustForwarded: true, xForwardedFor: '198.51.100.7:5555' }, '198.51.100.7'],
    ['XFF IPv6', { trustForwarded: true, xForwardedFor: '2001:DB8::1' }, '2001:db8::1'],
    [
      'XFF bracketed IPv6',
      { trustForwarded: true, xForwardedFor: '[2001:db8::1]:80' },
      '2001:db8::1',
    ],
    ['XFF mapped', { trustForwarded: true, xForwardedFor: '::ffff:198.51.100.7' }, '198.51.100.7'],
    ['XFF garbage last', { trustForwarded: true, xForwardedFor: '198.51.100.7, nope' }, peer],
    ['XFF empty last', { trustForwarded: true, xForwardedFor: '198.51.100.7, ' }, peer],
    ['XFF blank', { trustForwarded: true, xForwardedFor: '  ' }, peer],
    ['Forwarded', { trustForwarded: true, forwarded: 'for=192.0.2.60' }, '192.0.2.60'],
    [
      'Forwarded last element',
      { trustForwarded: true, forwarded: 'for=6.6.6.6;proto=https, for=192.0.2.60;by=10.0.0.1' },
      '192.0.2.60',
    ],
    [
      'Forwarded case and spaces',
      { trustForwarded: true, forwarded: 'proto=https; For = "192.0.2.60:4711"' },
      '192.0.2.60',
    ],
    [
      'Forwarded quoted IPv6 with port',
      { trustForwarded: true, forwarded: 'for="[2001:db8:cafe::17]:4711"' },
      '2001:db8:cafe::17',
    ],
    [
      'Forwarded quoted IPv6',
      { trustForwarded: true, forwarded: 'for="[2001:db8:cafe::17]"' },
      '2001:db8:cafe::17',
    ],
    [
      'Forwarded quoted comma in an earlier element',
      { trustForwarded: true, forwarded: 'for="_a,b";x="y;z", for=192.0.2.60' },
      '192.0.2.60',
    ],
    [
      'Forwarded repeated headers',
      { trustForwarded: true, forwarded: ['for=6.6.6.6', 'for=192.0.2.60'] },
      '192.0.2.60',
    ],
    ['Forwarded unknown', { trustForwarded: true, forwarded: 'for=unknown' }, peer],
    ['Forwarded obfuscated', { trustForwarded: true, forwarded: 'for=_hidden' }, peer],
    ['Forwarded obfuscated port', { trustForwarded: true, forwarded: 'for="_hidden:_p"' }, peer],
    ['Forwarded IPv4 in brackets', { trustForwarded: true, forwarded: 'for="[192.0.2.1]"' }, peer],
    ['Forwarded without for', { trustForwarded: true, forwarded: 'proto=https' }, peer],
    ['Forwarded two for', { trustForwarded: true, forwarded: 'for=1.1.1.1;for=2.2.2.2' }, peer],
    [
      'Forwarded wins over XFF even when unusable',
      { trustForwarded: true, forwarded: 'for=unknown', xForwardedFor: '198.51.100.7' },
      peer,
    ],
    [
      'Forwarded wins over XFF',
      { trustForwarded: true, forwarded: 'for=192.0.2.60', xForwardedFor: '198.51.100.7' },
      '192.0.2.60',
    ],
    [
      'blank Forwarded falls to XFF',
      { trustForwarded: true, forwarded: '', xForwardedFor: '198.51.100.7' },
      '198.51.100.7',
    ],
    ['no peer', { peer: undefined, trustForwarded: false }, ''],
    ['no peer, bad header', { peer: undefined, trustForwarded: true, xForwardedFor: 'x' }, ''],
  ])('%s', (_name, opts, expected) => {
    expect(clientAddress({ peer, trustForwarded: true, ...opts })).toBe(expected);
  });
});

describe('isPublicAddress', () => {
  it.each([
    // IPv4 public
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['93.184.216.34', true],
    ['100.63.255.255', true],
    ['100.128.0.0', true],
    ['172.15.255.255', true],
    ['172.32.0.0', true],
    ['198.17.255.255', true],
    ['198.20.0.0', true],
    ['223.255.255.255', true],
    // IPv4 not public
    ['0.0.0.0', false],
    ['0.1.2.3', false],
    ['10.0.0.1', false],
    ['100.64.0.1', false],
    ['100.127.255.255', false],
    ['127.0.0.1', false],
    ['127.255.255.254', false],
    ['169.254.169.254', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['192.0.0.1', false],
    ['192.0.0.170', false],
    ['192.0.2.1', false],
    ['192.88.99.1', false],
    ['192.168.0.1', false],
    ['198.18.0.1', false],
    ['198.19.255.255', false],
    ['198.51.100.1', false],
    ['203.0.113.1', false],
    ['224.0.0.1', false],
    ['239.255.255.250', false],
    ['240.0.0.1', false],
    ['255.255.255.255', false],
    // IPv4-mapped and other embedded IPv4 forms
    ['::ffff:8.8.8.8', true],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:169.254.169.254', false],
    ['64:ff9b::8.8.8.8', true],
    ['64:ff9b::10.0.0.1', false],
    ['64:ff9b::7f00:1', false],
    ['64:ff9b:1::8.8.8.8', false],
    ['2002:808:808::1', true],
    ['2002:7f00:1::1', false],
    ['2002:a00:1::1', false],
    ['2002:c0a8:101::1', false],
    ['2001:0:808:808::f7f7:f7f7', true],
    ['2001:0:808:808::80ff:fffe', false],
    ['2001:0:a00:1::f7f7:f7f7', false],
    ['::8.8.8.8', false],
    ['::ffff:0:8.8.8.8', false],
    // IPv6 public
    ['2606:4700:4700::1111', true],
    ['2a00:1450:4001:80b::200e', true],
    ['2001:4860:4860::8888', true],
    ['2620:fe::fe', true],
    // IPv6 not public
    ['::', false],
    ['::1', false],
    ['fc00::1', false],
    ['fd12:3456:789a::1', false],
    ['fe80::1', false],
    ['febf::1', false],
    ['fec0::1', false],
    ['ff02::1', false],
    ['ff0e::1', false],
    ['100::1', false],
    ['2001:db8::1', false],
    ['2001:2::1', false],
    ['2001:10::1', false],
    ['2001:20::1', false],
    ['2001:1ff::1', false],
    ['3fff::1', false],
    ['3fff:fff::1', false],
    ['4000::1', false],
    ['5f00::1', false],
    ['1::1', false],
    ['2620:4f:8000::1', false],
    // Not addresses
    ['fe80::1%eth0', false],
    ['localhost', false],
    ['', false],
    ['0x7f000001', false],
    ['2130706433', false],
  ])('%s: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
