import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';

import { COPIED_BODY_MAX, EncodedResult, textFrame } from './frames.js';

// Frames written straight to the socket must read, at a stock client, as the same messages
// `ws.send` would have sent: lengths on each side of the 7-, 16- and 64-bit forms, and text
// whose UTF-8 length is not its length in characters.
describe('text frames from shared bytes', () => {
  let server: WebSocketServer;
  let client: WebSocket;
  let socket: Duplex;
  const received: string[] = [];
  let waiting: (() => void) | null = null;

  beforeAll(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    const connected = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
    await new Promise((resolve) => server.once('listening', resolve));
    client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    client.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      received.push(String(data));
      waiting?.();
    });
    socket = ((await connected) as unknown as { _socket: Duplex })._socket;
  });
  afterAll(async () => {
    client.close();
    await new Promise((resolve) => server.close(resolve));
  });

  async function roundTrip(prefix: string, json: string): Promise<string> {
    received.length = 0;
    const arrived = new Promise<void>((resolve) => (waiting = resolve));
    for (const part of textFrame(Buffer.from(prefix), new EncodedResult(json).body())) {
      socket.write(part);
    }
    await arrived;
    return received[0] as string;
  }

  const prefix = '{"id":"sub-1","type":"next","payload":';
  // Payload lengths (prefix + body) of 125/126 and 65,535/65,536 bytes, where the header form
  // changes, and a long one; bodies copied into one buffer and written apart alike.
  const bodyFor = (payloadLength: number) => {
    const fill = payloadLength - prefix.length - '{"data":""}'.length - 1;
    return `{"data":"${'x'.repeat(fill)}"}`;
  };
  const copiedUpTo = prefix.length + COPIED_BODY_MAX;
  for (const length of [
    prefix.length + 12,
    125,
    126,
    127,
    copiedUpTo,
    copiedUpTo + 1,
    65_535,
    65_536,
    300_000,
  ]) {
    it(`carries a ${length}-byte payload`, async () => {
      const json = bodyFor(length);
      const text = await roundTrip(prefix, json);
      expect(Buffer.byteLength(text)).toBe(length);
      expect(text).toBe(`${prefix}${json}}`);
    });
  }

  it('counts UTF-8 bytes, not characters, in the envelope and the result', async () => {
    const wide = '{"id":"名前-🙂","type":"next","payload":';
    const json = JSON.stringify({ data: { text: 'こんにちは 🙂 ¿qué? '.repeat(20) } });
    expect(await roundTrip(wide, json)).toBe(`${wide}${json}}`);
  });

  it('makes a delivery one buffer up to COPIED_BODY_MAX bytes of body, two beyond', () => {
    const envelope = Buffer.from(prefix);
    const small = Buffer.alloc(COPIED_BODY_MAX, 'x');
    const large = Buffer.alloc(COPIED_BODY_MAX + 1, 'x');
    expect(textFrame(envelope, small)).toHaveLength(1);
    const apart = textFrame(envelope, large);
    expect(apart).toHaveLength(2);
    // The shared body itself, not a copy of it.
    expect(apart[1]).toBe(large);
  });

  it('encodes a result once, however many subscribers it goes to', () => {
    const result = new EncodedResult('{"data":1}');
    expect(result.body()).toBe(result.body());
    expect(result.body().toString()).toBe('{"data":1}}');
  });
});
