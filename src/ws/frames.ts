/**
 * WebSocket text frames built from bytes encoded once (RFC 6455 §5.2, server to client: no
 * mask). The fan-out serializes an event once per group of subscribers; encoding that JSON once
 * too, and writing the same bytes to every socket, spares each delivery a copy of the text, a
 * count of its UTF-8 length and its encoding (what `ws.send(text)` does per socket).
 */

/** One serialized execution result, encoded once for every subscriber it goes to. */
export class EncodedResult {
  private encoded: Buffer | null = null;

  constructor(readonly json: string) {}

  /** The result's UTF-8 bytes followed by the envelope's closing brace (protocol.ts). */
  body(): Buffer {
    return (this.encoded ??= Buffer.from(`${this.json}}`));
  }
}

/**
 * The start of a final, unfragmented text frame whose payload is `prefix` and then
 * `restLength` more bytes: the frame header followed by `prefix`, in one buffer.
 */
export function textFrameStart(prefix: Buffer, restLength: number): Buffer {
  const length = prefix.length + restLength;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(headerLength + prefix.length);
  out[0] = 0x81; // FIN, opcode 1 (text)
  if (length < 126) {
    out[1] = length;
  } else if (length < 65536) {
    out[1] = 126;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 127;
    out.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    out.writeUInt32BE(length >>> 0, 6);
  }
  prefix.copy(out, headerLength);
  return out;
}
