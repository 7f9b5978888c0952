import { describe, expect, it } from 'vitest';

import { sealedRefs, THUMB_MAX } from '../../web/src/e2ee/sealed-refs.js';

// What an encrypted message says of its files (web/src/e2ee/sealed-file.ts), as the receiving
// page reads it: a sender may put anything in the decrypted body, and only a small JPEG
// `data:` address is kept as an image's preview.

const file = { id: 'a1', name: 'pier.png', type: 'image/png', size: 1200, key: 'k', sha256: 's' };
const body = (thumb: unknown) => JSON.stringify({ text: 'see', files: [{ ...file, thumb }] });
const JPEG = 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgH';

describe('the files of an encrypted message', () => {
  it('keeps a small JPEG preview', () => {
    expect(sealedRefs(body(JPEG))).toEqual([{ ...file, thumb: JPEG }]);
  });

  it.each([
    ['another type', 'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4='],
    ['a script address', 'javascript:alert(1)'],
    ['an address elsewhere', 'https://tracker.example/pixel.jpg'],
    ['text after the data', `${JPEG}"onerror="x`],
    ['one too long', `data:image/jpeg;base64,${'A'.repeat(THUMB_MAX)}`],
    ['not a string', { src: JPEG }],
  ])('drops %s, keeping the file', (_, thumb) => {
    expect(sealedRefs(body(thumb))).toEqual([file]);
  });

  it('reads a file without a preview as before', () => {
    expect(sealedRefs(JSON.stringify({ files: [file] }))).toEqual([file]);
  });
});
