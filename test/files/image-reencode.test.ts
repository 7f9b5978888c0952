import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { reencodeImage } from '../../src/services/files/image-reencode.js';

let dir: string;
let n = 0;
async function file(bytes: Buffer | string): Promise<string> {
  const p = path.join(dir, `f${n++}`);
  await fs.writeFile(p, bytes);
  return p;
}
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-img-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const blue = { width: 1024, height: 600, channels: 3 as const, background: '#00f' };

describe('image re-encoding', () => {
  it('drops EXIF (location included) and caps the size', async () => {
    const jpeg = await sharp({ create: blue })
      .jpeg()
      .withExif({ IFD0: { Artist: 'uploader-secret' }, IFD3: { GPSLatitudeRef: 'N' } })
      .toBuffer();
    expect(jpeg.includes('uploader-secret')).toBe(true);
    const out = await reencodeImage(await file(jpeg), 'image/jpeg');
    if (!out.ok) throw new Error(out.reason);
    expect(out.bytes.includes('uploader-secret')).toBe(false);
    const meta = await sharp(out.bytes).metadata();
    expect(meta.exif).toBeUndefined();
    expect(meta.format).toBe('jpeg');
    expect([out.width, out.height]).toEqual([512, 300]);
  });

  it('refuses bytes of another format with 415 and broken images with 400', async () => {
    const png = await sharp({ create: blue }).png().toBuffer();
    expect(await reencodeImage(await file(png), 'image/jpeg')).toEqual({
      ok: false,
      status: 415,
      reason: "the file's bytes are png, not image/jpeg",
    });
    expect(await reencodeImage(await file(png), 'image/svg+xml')).toMatchObject({ status: 415 });
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    expect(await reencodeImage(await file(svg), 'image/png')).toMatchObject({ ok: false });
    expect(await reencodeImage(await file(png.subarray(0, 60)), 'image/png')).toMatchObject({
      ok: false,
      status: 400,
    });
    expect(await reencodeImage(await file('not an image'), 'image/png')).toMatchObject({
      status: 400,
    });
  });
});
