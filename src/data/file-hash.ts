import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';

/** sha256 and size of a file, read as a stream. */
export async function hashFile(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** A pass-through stream that hashes and counts what goes through it. */
export class Hashing extends Transform {
  private readonly hash = createHash('sha256');
  bytes = 0;

  constructor(private readonly onChunk: (bytes: number) => void = () => {}) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.onChunk(chunk.length);
    done(null, chunk);
  }

  /** The sha256 of everything that went through (call once the stream has ended). */
  digest(): string {
    return this.hash.digest('hex');
  }
}
