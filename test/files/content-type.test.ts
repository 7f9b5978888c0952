import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';

import {
  checkStoredType,
  isAllowedAttachmentType,
  normalizeType,
} from '../../src/services/files/content-type.js';

let dir: string;
let n = 0;
async function file(bytes: Buffer | string): Promise<string> {
  const p = path.join(dir, `f${n++}`);
  await fs.writeFile(p, bytes);
  return p;
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-types-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const red = { width: 8, height: 8, channels: 3 as const, background: '#f00' };

describe('attachment type check against the bytes', () => {
  it('accepts images whose bytes match the declared type, refuses those that do not', async () => {
    const png = await sharp({ create: red }).png().toBuffer();
    const jpeg = await sharp({ create: red }).jpeg().toBuffer();
    expect(await checkStoredType(await file(png), 'image/png')).toEqual({
      ok: true,
      contentType: 'image/png',
    });
    expect(await checkStoredType(await file(jpeg), 'Image/JPEG; x=y')).toEqual({
      ok: true,
      contentType: 'image/jpeg',
    });
    expect(await checkStoredType(await file(png), 'image/jpeg')).toEqual({
      ok: false,
      reason: "the file's bytes are image/png, not image/jpeg",
    });
    expect(await checkStoredType(await file('just text'), 'image/png')).toEqual({
      ok: false,
      reason: "the file's bytes do not match image/png",
    });
  });

  it('refuses SVG, which can carry script, and types the contract does not list', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    expect(await checkStoredType(await file(svg), 'image/svg+xml')).toMatchObject({ ok: false });
    expect(await checkStoredType(await file('x'), 'application/x-msdownload')).toMatchObject({
      ok: false,
      reason: 'files of type application/x-msdownload are not accepted',
    });
    expect(isAllowedAttachmentType('video/mp4')).toBe(false);
    expect(normalizeType('not a type')).toBeNull();
  });

  it('wants text to be UTF-8 and not a binary format, and JSON to parse', async () => {
    expect(await checkStoredType(await file('héllo ✓'), 'text/plain')).toMatchObject({ ok: true });
    expect(
      await checkStoredType(await file(Buffer.from([0x68, 0xff, 0xfe])), 'text/plain'),
    ).toEqual({ ok: false, reason: 'a text/plain file must be valid UTF-8' });
    const png = await sharp({ create: red }).png().toBuffer();
    expect(await checkStoredType(await file(png), 'text/plain')).toMatchObject({ ok: false });
    expect(await checkStoredType(await file('{"a":[1,2]}'), 'application/json')).toMatchObject({
      ok: true,
    });
    expect(await checkStoredType(await file('{"a":'), 'application/json')).toEqual({
      ok: false,
      reason: 'the file is not valid JSON',
    });
  });

  it('checks pdf, gzip and zip by magic numbers; octet-stream is taken as it is', async () => {
    const gz = gzipSync(Buffer.from('hello'));
    expect(await checkStoredType(await file(gz), 'application/gzip')).toMatchObject({ ok: true });
    expect(await checkStoredType(await file(gz), 'application/zip')).toMatchObject({ ok: false });
    const pdf = '%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n';
    expect(await checkStoredType(await file(pdf), 'application/pdf')).toMatchObject({ ok: true });
    // an empty zip archive: end-of-central-directory record only
    const zip = Buffer.concat([Buffer.from('PK\x05\x06', 'latin1'), Buffer.alloc(18)]);
    expect(await checkStoredType(await file(zip), 'application/zip')).toMatchObject({ ok: true });
    expect(
      await checkStoredType(await file(Buffer.from([1, 2, 3])), 'application/octet-stream'),
    ).toMatchObject({ ok: true });
  });
});
