export const toBase64Url = (buf: Uint8Array): string => Buffer.from(buf).toString('base64url');

/** Decodes unpadded base64url; null when the input is not base64url. */
export function fromBase64Url(text: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  return Buffer.from(text, 'base64url');
}
