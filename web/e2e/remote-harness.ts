// What the two-server browser tests share (remote-spaces, remote-people): a server that
// federates over plain HTTP on loopback, a picture to upload, and a name made safe for a RegExp.
import sharp from 'sharp';

import { TestServer } from './harness.js';

/** A server on `port` that federates with others on loopback, signups open and cheap. */
export function federating(port: number, env: Record<string, string> = {}): Promise<TestServer> {
  return TestServer.start(
    {
      ...env,
      SVC_OPEN_REGISTRATION: 'true',
      SVC_REGISTRATION_POW_BITS: '10',
      SVC_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      SVC_S2S_INSECURE: 'true',
      SVC_S2S_TIMEOUT_MS: '3000',
    },
    port,
  );
}

/** A PNG of one colour. */
export function square(colour: string, size = 64): Promise<Buffer> {
  return sharp({ create: { width: size, height: size, channels: 3, background: colour } })
    .png()
    .toBuffer();
}

/** `s` matched literally inside a RegExp (a host's `127.0.0.1:port`). */
export const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
