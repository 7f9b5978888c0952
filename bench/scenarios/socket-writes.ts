// `socket-writes`: what one delivery's socket write costs the writing process, by the shape of the
// write. A delivery is a frame's start (header and the subscription's prefix, its own) and a body
// shared by the fan-out group (src/ws/frames.ts). Shapes:
//   cork    the server's: cork, write the start, write the body, uncork after the turn (writev)
//   cork-one the same with the start and the body copied into one buffer (one write)
//   concat  the start and the body copied into one buffer, one write, no cork
//   queue   the parts kept per socket for the turn, then one write of their concatenation
//   cork-2, cork-4  two or four one-buffer frames to each socket in one corked write: what a
//           delivery costs when a socket's deliveries are gathered (the figures are per frame)
// The reader is another process, so the figures are the writer's CPU alone. A reference for the
// deliveries' cost (docs/performance.md, "What is left"); no target.
import { spawn } from 'node:child_process';
import net from 'node:net';

import type { ScenarioResult } from '../lib/report.js';

import type { Options } from './fanout.js';

const SOCKETS = 500;
const ROUNDS = 400;
const RUNS = 3;
const BODY = Buffer.alloc(600, 'a');
type Shape = 'cork' | 'cork-one' | 'concat' | 'queue' | 'cork-2' | 'cork-4';
const SHAPES: Shape[] = ['cork', 'cork-one', 'concat', 'queue', 'cork-2', 'cork-4'];
/** Frames per socket and round. */
const framesOf = (shape: Shape) => (shape === 'cork-2' ? 2 : shape === 'cork-4' ? 4 : 1);

const READER = `
const net = require('node:net');
const server = net.createServer((s) => s.on('data', () => {}));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function start(i: number): Buffer {
  return Buffer.alloc(40, i & 255);
}

async function round(shape: Shape, sockets: net.Socket[]): Promise<void> {
  if (shape === 'cork') {
    sockets.forEach((s, i) => {
      s.cork();
      s.write(start(i));
      s.write(BODY);
    });
    await turn();
    for (const s of sockets) s.uncork();
  } else if (shape === 'cork-one' || shape === 'cork-2' || shape === 'cork-4') {
    const frames = framesOf(shape);
    sockets.forEach((s, i) => {
      s.cork();
      for (let f = 0; f < frames; f++) s.write(Buffer.concat([start(i), BODY]));
    });
    await turn();
    for (const s of sockets) s.uncork();
  } else if (shape === 'concat') {
    sockets.forEach((s, i) => s.write(Buffer.concat([start(i), BODY])));
    await turn();
  } else {
    const pending = new Map<net.Socket, Buffer[]>();
    sockets.forEach((s, i) => pending.set(s, [start(i), BODY]));
    await turn();
    for (const [s, parts] of pending) s.write(Buffer.concat(parts));
  }
}

/** Microseconds of the writer's CPU (user, system) per frame written in one shape. */
async function measure(shape: Shape, sockets: net.Socket[]) {
  const before = process.cpuUsage();
  for (let r = 0; r < ROUNDS; r++) await round(shape, sockets);
  // Let the last writes leave before reading the clock.
  while (sockets.some((s) => s.writableLength > 0)) await turn();
  const used = process.cpuUsage(before);
  const writes = SOCKETS * ROUNDS * framesOf(shape);
  return { user: used.user / writes, system: used.system / writes };
}

export async function socketWrites(_opts: Options): Promise<ScenarioResult> {
  const reader = spawn(process.execPath, ['-e', READER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const sockets: net.Socket[] = [];
  try {
    const port = await new Promise<number>((resolve, reject) => {
      reader.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      reader.once('exit', () => reject(new Error('the reader process exited')));
    });
    for (let i = 0; i < SOCKETS; i++) {
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      socket.setNoDelay(true);
      sockets.push(socket);
    }
    const seen = new Map<Shape, Array<{ user: number; system: number }>>();
    // Alternated, so a slower stretch of the machine does not fall on one shape alone.
    for (let run = 0; run < RUNS; run++) {
      for (const shape of SHAPES) {
        const runs = seen.get(shape) ?? [];
        runs.push(await measure(shape, sockets));
        seen.set(shape, runs);
      }
    }
    const range = (values: number[]) =>
      `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
    return {
      scenario: 'socket-writes',
      database: 'sqlite',
      rows: SHAPES.map((shape) => {
        const runs = seen.get(shape) ?? [];
        return {
          shape,
          sockets: SOCKETS,
          frame_bytes: 40 + BODY.length,
          user_us_per_frame: range(runs.map((r) => r.user)),
          system_us_per_frame: range(runs.map((r) => r.system)),
        };
      }),
      targets: [],
      notes: [
        `${RUNS} runs of ${ROUNDS} rounds per shape, alternated; the reader in its own process`,
      ],
    };
  } finally {
    for (const s of sockets) s.destroy();
    reader.kill();
  }
}
