/**
 * WebSocket text frames built from bytes encoded once (RFC 6455 §5.2, server to client: no
 * mask). The fan-out serializes an event once per group of subscribers; encoding that JSON once
 * too, and copying the same bytes behind each subscriber's envelope, spares each delivery a copy
 * of the text, a count of its UTF-8 length and its encoding (what `ws.send(text)` does per
 * socket).
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
 * Bodies up to this many bytes are copied into their frame, so a delivery is one buffer and one
 * write; a start and a body written apart leave as a `writev` of two, which costs this machine's
 * writer more than the copy (bench `socket-writes`: about 0.5 µs of user time and 0.3 µs of
 * system time per write, of 4–5 µs). Larger bodies are written apart, uncopied.
 */
export const COPIED_BODY_MAX = 16 * 1024;

/**
 * A delivery's bytes: a final, unfragmented text frame whose payload is `prefix` and then `body`.
 * One buffer (header, prefix, body) when the body is at most COPIED_BODY_MAX bytes; otherwise the
 * frame's start (header and prefix) and the shared body, to be written in that order.
 */
export function textFrame(prefix: Buffer, body: Buffer): Buffer[] {
  if (body.length > COPIED_BODY_MAX) return [textFrameStart(prefix, body.length), body];
  const out = frameWithHeader(prefix.length + body.length, prefix.length + body.length);
  const headerLength = out.length - prefix.length - body.length;
  prefix.copy(out, headerLength);
  body.copy(out, headerLength + prefix.length);
  return [out];
}

/**
 * The start of a final, unfragmented text frame whose payload is `prefix` and then
 * `restLength` more bytes: the frame header followed by `prefix`, in one buffer.
 */
function textFrameStart(prefix: Buffer, restLength: number): Buffer {
  const out = frameWithHeader(prefix.length + restLength, prefix.length);
  prefix.copy(out, out.length - prefix.length);
  return out;
}

/** A buffer of the frame header for a payload of `length` bytes and `room` bytes after it. */
function frameWithHeader(length: number, room: number): Buffer {
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(headerLength + room);
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
  return out;
}
