import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';

import { literalAddress } from './public-connector.js';

describe('literalAddress', () => {
  // Host names as the URL parser leaves them, and forms it would have rewritten: the answer is
  // ipaddr.js's reading of every address form, and null for every name.
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['93.184.216.34', '93.184.216.34'],
    ['[::1]', '::1'],
    ['[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['[64:ff9b::a00:5]', '64:ff9b::a00:5'],
    ['0x7f.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['www.example-site.com', null],
    ['localhost', null],
    ['cafe.be', null],
    ['deadbeef', null],
    ['xn--lcalhost-9za', null],
  ])('%s', (host, expected) => {
    expect(literalAddress(host)?.toString() ?? null).toBe(expected);
    const bare = host.startsWith('[') ? host.slice(1, -1) : host;
    expect(literalAddress(host)?.toString() ?? null).toBe(
      ipaddr.isValid(bare) ? ipaddr.parse(bare).toString() : null,
    );
  });
});
