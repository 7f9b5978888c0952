import { describe, expect, it } from 'vitest';

import { linksIn } from './links.js';

describe('linksIn', () => {
  it.each([
    ['no links here', []],
    ['see https://a.example/x and http://b.example', ['https://a.example/x', 'http://b.example/']],
    ['dupes http://a.example/ http://a.example/#frag http://a.example', ['http://a.example/']],
    ['bare example.com and file.py are not links', []],
    ['ftp://a.example/ mailto:x@a.example x@a.example', []],
    ['(https://a.example/path_(x))', ['https://a.example/path_(x)']],
    [
      [1, 2, 3, 4, 5, 6].map((n) => `https://s${n}.example/`).join(' '),
      [1, 2, 3, 4, 5].map((n) => `https://s${n}.example/`),
    ],
  ])('%s', (text, links) => {
    expect(linksIn(text)).toEqual(links);
  });
});
