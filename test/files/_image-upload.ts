import { randomBytes } from 'node:crypto';

import sharp from 'sharp';

import { agentHeaders, type Agent, type TestApp } from '../_util/app.js';

/** One part of a multipart body: a text field, or a file with its declared type. */
export type Part =
  { name: string; value: string } | { name: string; filename: string; type: string; bytes: Buffer };

/** A real multipart/form-data body and its Content-Type (with a random boundary). */
export function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----svc${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if ('filename' in p) head += `; filename="${p.filename}"\r\nContent-Type: ${p.type}`;
    chunks.push(Buffer.from(`${head}\r\n\r\n`));
    chunks.push('bytes' in p ? p.bytes : Buffer.from(p.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POSTs a multipart body to a file route as `agent` (cookies and CSRF header). */
export async function postMultipart(
  t: TestApp,
  url: string,
  agent: Agent | null,
  parts: Part[],
  headers: Record<string, string> = {},
) {
  const { body, contentType } = multipart(parts);
  return t.inject({
    method: 'POST',
    url,
    headers: { 'content-type': contentType, ...agentHeaders(agent), ...headers },
    payload: body,
  });
}

/** A file part named `file`. */
export const filePart = (bytes: Buffer, type: string, filename = 'image'): Part => ({
  name: 'file',
  filename,
  type,
  bytes,
});

/** A solid image made with sharp, in a format; `exif` writes an Artist tag to find later. */
export async function makeImage(
  format: 'png' | 'jpeg' | 'gif' | 'webp',
  opts: { width?: number; height?: number; color?: string; exif?: string } = {},
): Promise<Buffer> {
  let img = sharp({
    create: {
      width: opts.width ?? 64,
      height: opts.height ?? 64,
      channels: 3,
      background: opts.color ?? '#3a7',
    },
  });
  if (opts.exif) img = img.withMetadata({ exif: { IFD0: { Artist: opts.exif } } });
  return img.toFormat(format).toBuffer();
}

/** An animated GIF of `frames` frames of different colours. */
export async function makeAnimatedGif(frames = 3, side = 32): Promise<Buffer> {
  const colors = ['#f00', '#0f0', '#00f', '#ff0'];
  const raw = Buffer.concat(
    await Promise.all(
      Array.from({ length: frames }, (_, i) =>
        sharp({
          create: { width: side, height: side, channels: 3, background: colors[i % 4]! },
        })
          .raw()
          .toBuffer(),
      ),
    ),
  );
  return sharp(raw, { raw: { width: side, height: side * frames, channels: 3, pageHeight: side } })
    .gif({ loop: 0, delay: Array(frames).fill(100) })
    .toBuffer();
}
