import { describe, expect, it } from 'vitest';

import { contentDisposition, parseRange } from './download-headers.js';

describe('parseRange', () => {
  it.each([
    [undefined, { kind: 'none' }],
    ['bytes=0-9', { kind: 'range', start: 0, end: 9 }],
    ['bytes=90-', { kind: 'range', start: 90, end: 99 }],
    ['bytes=90-1000', { kind: 'range', start: 90, end: 99 }],
    ['bytes=-10', { kind: 'range', start: 90, end: 99 }],
    ['bytes=-1000', { kind: 'range', start: 0, end: 99 }],
    ['bytes=100-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    // Not one well-formed byte range: ignored, the whole file is served.
    ['bytes=9-0', { kind: 'none' }],
    ['bytes=0-1,5-6', { kind: 'none' }],
    ['items=0-1', { kind: 'none' }],
    ['bytes=-', { kind: 'none' }],
  ] as const)('%s over 100 bytes', (header, expected) => {
    expect(parseRange(header, 100)).toEqual(expected);
  });
});

describe('contentDisposition', () => {
  it.each([
    ['report.pdf', `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`],
    [
      'naïve "plan" (v2)*.txt',
      `attachment; filename="na_ve _plan_ (v2)*.txt"; filename*=UTF-8''na%C3%AFve%20%22plan%22%20%28v2%29%2A.txt`,
    ],
    ['a\\b;c.txt', `attachment; filename="a_b;c.txt"; filename*=UTF-8''a%5Cb%3Bc.txt`],
    ['日本.png', `attachment; filename="__.png"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.png`],
  ])('%s', (name, expected) => {
    expect(contentDisposition(name)).toBe(expected);
  });
});
