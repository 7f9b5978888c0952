import { generateKeyPairSync } from 'node:crypto';
import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { S2sClient, UpstreamError } from '../../src/federation/s2s-client.js';
import { systemClock } from '../../src/lib/clock.js';
import type { ServerKeys } from '../../src/services/instance/server-keys.js';
import { rawEd25519Public } from '../../src/services/instance/server-keys.js';

// A peer is named by a host id that comes from a client's URL, so outside development
// (`SVC_S2S_INSECURE`) the s2s client connects only to public addresses, checked at connect
// time on the address connected to (src/net/public-connector.ts): a loopback peer is refused
// and never receives a connection.
describe('the addresses a peer may have', () => {
  let canary: net.Server;
  let port = 0;
  let connections = 0;
  const pair = generateKeyPairSync('ed25519');
  const keys = {
    signing: pair.privateKey,
    signingPublic: pair.publicKey,
    signingPublicRaw: rawEd25519Public(pair.publicKey),
  } as ServerKeys;
  const client = (insecure: boolean) =>
    new S2sClient({ selfId: 'a.example', keys, clock: systemClock, timeoutMs: 2000, insecure });

  beforeAll(async () => {
    canary = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    port = (canary.address() as net.AddressInfo).port;
  });
  afterAll(() => canary?.close());

  it('refuses a loopback peer, by literal address and by name, without connecting', async () => {
    const c = client(false);
    try {
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
        const err = await c.discovery(host).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(UpstreamError);
        expect((err as UpstreamError).reason).toBe('refused');
      }
      expect(connections).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('connects to it in development (insecure), where the canary sees the connection', async () => {
    const c = client(true);
    try {
      const err = await c.discovery(`127.0.0.1:${port}`).catch((e: unknown) => e);
      expect((err as UpstreamError).reason).not.toBe('refused');
      expect(connections).toBeGreaterThan(0);
    } finally {
      await c.close();
    }
  });
});
