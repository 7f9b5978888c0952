import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

import { SECURITY_HEADERS } from '../lib/security-headers.js';

/**
 * Answers an upgrade request with a plain HTTP refusal and closes the socket; the bodies are the
 * JSON the rest of /api answers (`{"error":"too_many_connections"}`, `{"error":"blocked"}`, ...).
 */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify(body);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    'Cache-Control: no-store',
    ...Object.entries(SECURITY_HEADERS).map(([k, v]) => `${k}: ${v}`),
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.once('finish', () => socket.destroy());
  socket.end(`${head.join('\r\n')}\r\n\r\n${text}`);
}
