import sharp, { type Metadata } from 'sharp';

/** Avatar types (contract: File routes); the re-encoded file keeps its format. */
export const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
/** An avatar is shown at most this wide and high; larger images are scaled down. */
export const AVATAR_MAX_SIDE = 512;
/** Refuse images with more pixels than this before decoding them (decompression bombs). */
export const MAX_INPUT_PIXELS = 40_000_000;

const FORMAT_BY_TYPE: Record<string, 'png' | 'jpeg' | 'gif' | 'webp'> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export type ReencodeResult =
  | { ok: true; bytes: Buffer; contentType: string; width: number; height: number }
  | { ok: false; status: 400 | 415; reason: string };

/**
 * Decodes an uploaded image and encodes its pixels again in the same format: metadata (EXIF with
 * location, ICC, XMP, comments) is dropped, the orientation applied, the size capped at
 * `maxSide`, animation kept for GIF and WebP. Bytes that are not the declared format (a polyglot,
 * a renamed file) get 415; bytes that do not decode get 400. Nothing the uploader wrote beyond
 * pixels is ever served back.
 */
export async function reencodeImage(
  file: string,
  declaredType: string,
  maxSide = AVATAR_MAX_SIDE,
): Promise<ReencodeResult> {
  const format = FORMAT_BY_TYPE[declaredType];
  if (!format) {
    return { ok: false, status: 415, reason: `images must be PNG, JPEG, GIF or WebP` };
  }
  let meta: Metadata;
  try {
    meta = await sharp(file, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  } catch {
    return { ok: false, status: 400, reason: 'the image could not be read' };
  }
  if (meta.format !== format) {
    return {
      ok: false,
      status: 415,
      reason: `the file's bytes are ${meta.format ?? 'not an image'}, not ${declaredType}`,
    };
  }
  const animated = format === 'gif' || format === 'webp';
  try {
    const { data, info } = await sharp(file, {
      limitInputPixels: MAX_INPUT_PIXELS,
      failOn: 'error',
      animated,
    })
      .rotate()
      .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
      .toFormat(format)
      .toBuffer({ resolveWithObject: true });
    return {
      ok: true,
      bytes: data,
      contentType: declaredType,
      width: info.width,
      height: info.pageHeight ?? info.height,
    };
  } catch {
    return { ok: false, status: 400, reason: 'the image could not be decoded' };
  }
}
