import { beforeAll, describe, expect, it } from 'vitest';

import { netnsUnavailable, runInNetns } from './_netns.js';

// SafeFetch against real servers inside a network namespace of the test's own
// (_scenario-safe-fetch.ts): page servers on public-looking addresses, a DNS server, and
// canaries on loopback and private addresses that must never see a connection.

interface Outcome {
  ok: boolean;
  reason?: string;
  url?: string;
  status?: number;
  bytes?: number;
  text?: string;
  ms: number;
}
interface Result {
  results: Record<string, Outcome>;
  rebind: string[];
  reuseConnections: number;
  canaryConnections: number;
  credentialHeaders: { authorization: string | null };
  totalMs: number;
}

const skip = netnsUnavailable();

describe.skipIf(skip !== null)(
  `SafeFetch in a network namespace${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let r: Result;
    beforeAll(async () => {
      r = await runInNetns<Result>('_scenario-safe-fetch.ts');
    }, 60_000);

    it('no refused address ever received a connection', () => {
      expect(r.canaryConnections).toBe(0);
    });

    it.each(['plain', 'literalPublic', 'gzip', 'br', 'deflate'])('%s fetches the page', (name) => {
      expect(r.results[name]).toMatchObject({ ok: true, status: 200 });
      expect(r.results[name]?.text).toContain('<title>Hello</title>');
    });

    it('sends no URL credentials', () => {
      expect(r.results.credentials).toMatchObject({ ok: true });
      expect(r.results.credentials?.url).toBe('http://www.example-site.com/creds');
      expect(r.credentialHeaders.authorization).toBeNull();
    });

    it('follows up to 5 redirects, each checked again', () => {
      expect(r.results.redirectToOtherSite).toMatchObject({
        ok: true,
        url: 'http://other.example-site.com/final',
      });
      expect(r.results.fiveRedirects).toMatchObject({ ok: true });
      expect(r.results.sixRedirects).toMatchObject({ ok: false, reason: 'tooManyRedirects' });
      expect(r.results.endlessRedirects).toMatchObject({ ok: false, reason: 'tooManyRedirects' });
    });

    it.each([
      'redirectToLoopback',
      'redirectToPrivateName',
      'redirectToMappedMetadata',
      'nameToPrivate',
      'nameToLoopback',
      'nameToMetadata',
      'nameMixed',
      'localhost',
      'localhostTrailingDot',
      'localhostFullwidth',
      'loopbackDecimal',
      'loopbackHex',
      'loopbackHexDotted',
      'loopbackOctal',
      'loopbackShort',
      'loopbackTrailingDot',
      'loopbackFullwidthDigits',
      'loopbackV6',
      'loopbackMapped',
      'loopbackMappedHex',
      'loopbackNat64',
      'loopback6to4',
      'loopbackCompatible',
      'zero',
      'zeroDotted',
      'privateLiteral',
      'privateHex',
      'metadataLiteral',
      'sharedLiteral',
      'https',
      'httpsPrivateName',
    ])('%s is refused at connect', (name) => {
      expect(r.results[name]).toMatchObject({ ok: false, reason: 'refusedAddress' });
    });

    it.each(['ftp', 'file', 'javascript', 'redirectToFile'])('%s: only http and https', (name) => {
      expect(r.results[name]).toMatchObject({ ok: false, reason: 'badUrl' });
    });

    it('a name answering public then loopback (rebinding) never reaches loopback', () => {
      expect(r.rebind).toEqual([
        'ok',
        'refusedAddress',
        'ok',
        'refusedAddress',
        'ok',
        'refusedAddress',
      ]);
    });

    it('reuses a checked connection for the next fetch to the same origin', () => {
      // Three fetches one after another: without reuse, three connections.
      expect(r.reuseConnections).toBeGreaterThan(0);
      expect(r.reuseConnections).toBeLessThan(3);
    });

    it('gives up on a server that never answers or trickles its body, at 5 seconds', () => {
      for (const name of ['hang', 'slowBody']) {
        expect(r.results[name]).toMatchObject({ ok: false, reason: 'timeout' });
        expect(r.results[name]?.ms).toBeGreaterThanOrEqual(4900);
        expect(r.results[name]?.ms).toBeLessThan(6500);
      }
    });

    it('refuses huge headers', () => {
      expect(r.results.hugeHeaders).toMatchObject({ ok: false, reason: 'headersTooLarge' });
    });

    it('reads at most 1 MiB of decoded body', () => {
      expect(r.results.exactly1MiB).toMatchObject({ ok: true, bytes: 1024 * 1024 });
      expect(r.results.over1MiB).toMatchObject({ ok: false, reason: 'tooLarge' });
      expect(r.results.gzipBomb).toMatchObject({ ok: false, reason: 'tooLarge' });
    });

    it('unknown names fail as DNS failures', () => {
      expect(r.results.nameUnknown).toMatchObject({ ok: false, reason: 'dns' });
    });
  },
);
