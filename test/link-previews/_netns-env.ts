import dgram from 'node:dgram';
import http from 'node:http';
import net from 'node:net';

import { PRIVATE_V4 } from './_netns.js';

// Inside the namespace: a tiny DNS server and connection-counting canaries.

/** Answers for a name: a list, or a function called per A query (rebinding). */
export type DnsAnswer = string[] | (() => string[]);

/** A DNS server on 127.0.0.1:53 answering A queries from `zone`; AAAA gets no answer. */
export async function startDns(zone: Record<string, DnsAnswer>): Promise<dgram.Socket> {
  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    let off = 12;
    const labels: string[] = [];
    while (off < msg.length && msg[off] !== 0) {
      const len = msg[off] as number;
      labels.push(msg.subarray(off + 1, off + 1 + len).toString('latin1'));
      off += len + 1;
    }
    const qEnd = off + 5;
    const qtype = msg.readUInt16BE(off + 1);
    const name = labels.join('.').toLowerCase();
    const entry = zone[name];
    const known = entry !== undefined;
    const addrs = qtype === 1 && entry ? (typeof entry === 'function' ? entry() : entry) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addrs.length, 6);
    const answers = addrs.map((a) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(1, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(0, 6);
      rr.writeUInt16BE(4, 10);
      a.split('.').forEach((o, i) => rr.writeUInt8(Number(o), 12 + i));
      return rr;
    });
    sock.send(
      Buffer.concat([header, msg.subarray(12, qEnd), ...answers]),
      rinfo.port,
      rinfo.address,
    );
  });
  await new Promise<void>((resolve) => sock.bind(53, '127.0.0.1', resolve));
  return sock;
}

/** TCP listeners on refused addresses that count every connection they receive. */
export async function startCanaries(ports: number[] = [80, 443]): Promise<{
  connections: () => number;
  close: () => void;
}> {
  let count = 0;
  const servers: net.Server[] = [];
  for (const host of ['127.0.0.1', ...PRIVATE_V4]) {
    for (const port of ports) {
      const s = net.createServer((c) => {
        count++;
        c.destroy();
      });
      await new Promise<void>((resolve) => s.listen(port, host, resolve));
      servers.push(s);
    }
  }
  return { connections: () => count, close: () => servers.forEach((s) => s.close()) };
}

/** An HTTP server on `host:port`. */
export async function startHttp(
  host: string,
  port: number,
  handler: http.RequestListener,
): Promise<http.Server> {
  const server = http.createServer({ maxHeaderSize: 64 * 1024 }, handler);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return server;
}

/** Prints the scenario's result for the parent and ends the process. */
export function report(result: unknown): void {
  process.stdout.write(`${JSON.stringify({ result })}\n`);
  process.exit(0);
}
