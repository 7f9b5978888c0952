import net, { type AddressInfo } from 'node:net';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { GATHER_FROM, WriteBatcher } from './write-batcher.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// A real loopback socket pair; the writer's system calls are counted at the stream's own
// `_writev` and `_write`, which issue them.
describe('write batcher', () => {
  let server: net.Server;
  let writer: net.Socket;
  let received = '';
  let writes = 0;

  beforeEach(async () => {
    received = '';
    writes = 0;
    server = net.createServer((s) => s.on('data', (d: Buffer) => (received += d.toString())));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    writer = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise((resolve) => writer.once('connect', resolve));
    const inner = writer as unknown as {
      _writev: (...args: unknown[]) => void;
      _write: (...args: unknown[]) => void;
    };
    const writev = inner._writev.bind(writer);
    const write = inner._write.bind(writer);
    inner._writev = (...args) => {
      writes += 1;
      writev(...args);
    };
    inner._write = (...args) => {
      writes += 1;
      write(...args);
    };
  });
  afterEach(async () => {
    writer.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const arrived = async (text: string) => {
    for (let i = 0; i < 200 && received !== text; i++) await sleep(5);
    return received;
  };

  it('sends a turn’s frames together at the end of the turn while the loop has room', async () => {
    const batcher = new WriteBatcher({ maxDelayMs: 100, load: () => GATHER_FROM });
    batcher.hold(writer);
    writer.write('a');
    writer.write('b');
    expect(writes).toBe(0);
    await turn();
    expect(writes).toBe(1);
    expect(await arrived('ab')).toBe('ab');
  });

  it('gathers a socket’s frames over several turns while the loop is busy', async () => {
    const delays: number[] = [];
    const batcher = new WriteBatcher({
      maxDelayMs: 60,
      load: () => 1,
      gathered: (ms) => delays.push(ms),
    });
    batcher.hold(writer);
    writer.write('a');
    await turn();
    await turn();
    // The second frame comes turns later and still joins the first one's write.
    batcher.hold(writer);
    writer.write('b');
    expect(writes).toBe(0);
    await sleep(100);
    expect(writes).toBe(1);
    expect(await arrived('ab')).toBe('ab');
    expect(delays).toEqual([60]);
  });

  it('waits longer the busier the loop, and not at all when gathering is off', () => {
    let load = 0;
    const on = new WriteBatcher({ maxDelayMs: 100, load: () => load });
    const off = new WriteBatcher({ maxDelayMs: 0, load: () => load });
    const delays = [0, GATHER_FROM, 0.9, 0.95, 1].map((l) => {
      load = l;
      return [on.delayMs(), off.delayMs()];
    });
    expect(delays).toEqual([
      [0, 0],
      [0, 0],
      [50, 0],
      [75, 0],
      [100, 0],
    ]);
    expect(new WriteBatcher().delayMs()).toBe(0);
  });

  it('keeps the order of frames across turns, and an ended socket sends what it held at once', async () => {
    const batcher = new WriteBatcher({ maxDelayMs: 5000, load: () => 1 });
    batcher.hold(writer);
    writer.write('1');
    writer.write('2');
    await turn();
    batcher.hold(writer);
    writer.write('3');
    // Ending a corked socket uncorks it: nothing waits for the gathering's delay.
    writer.end();
    expect(await arrived('123')).toBe('123');
  });

  it('writes a held socket’s frames at once when released, the others still wait', async () => {
    const batcher = new WriteBatcher({ maxDelayMs: 5000, load: () => 1 });
    batcher.hold(writer);
    writer.write('x');
    batcher.release(writer);
    expect(writes).toBe(1);
    expect(await arrived('x')).toBe('x');
    // The next frame holds it again, for the gathering's delay.
    batcher.hold(writer);
    writer.write('y');
    await turn();
    expect(writes).toBe(1);
    batcher.flush();
    expect(await arrived('xy')).toBe('xy');
  });
});
