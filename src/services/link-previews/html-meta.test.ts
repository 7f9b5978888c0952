import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';

import { cleanText, parseHtml, previewOf } from './html-meta.js';

const page = (head: string) =>
  `<!doctype html><html><head>${head}</head><body><p>x</p></body></html>`;
const res = (body: Buffer | string, type = 'text/html', url = 'https://site.example/a/b') => ({
  url,
  headers: { 'content-type': type },
  body: typeof body === 'string' ? Buffer.from(body) : body,
});

describe('previewOf', () => {
  it('prefers Open Graph, then Twitter cards, then title and description', () => {
    const html = page(`
      <title>Plain title</title>
      <meta name="description" content="Plain description">
      <meta name="twitter:title" content="Card title">
      <meta property="og:title" content="OG &amp; title">
      <meta property="og:image" content="/img/x.png">
      <meta property="og:image" content="/img/second.png">
      <meta property="og:site_name" content="Site">`);
    expect(previewOf(res(html))).toEqual({
      kind: 'page',
      title: 'OG & title',
      description: 'Plain description',
      imageUrl: 'https://site.example/img/x.png',
      siteName: 'Site',
      mimeType: null,
      size: null,
    });
  });

  it('falls back to Twitter cards and the title', () => {
    const html = page(`<title> Only &lt;title&gt; </title>
      <meta name="twitter:description" content="Card text">
      <meta name="twitter:image" content="pic.jpg">`);
    expect(previewOf(res(html))).toMatchObject({
      title: 'Only <title>',
      description: 'Card text',
      imageUrl: 'https://site.example/a/pic.jpg',
    });
  });

  it('refuses non-http image URLs and ignores the body', () => {
    const html = `<html><head><title>T</title><meta property="og:image" content="javascript:alert(1)">
      </head><body><meta property="og:description" content="in body"></body></html>`;
    expect(previewOf(res(html))).toMatchObject({ title: 'T', imageUrl: null, description: null });
  });

  it('strips control characters and cuts long text', () => {
    expect(cleanText('  a\u0000b\u0007\u202ec\n\t d  ', 100)).toBe('a b c d');
    expect(cleanText('x'.repeat(400), 300)).toHaveLength(300);
    expect(previewOf(res(page(`<title>${'y'.repeat(5000)}</title>`)))?.title).toHaveLength(300);
  });

  it.each([
    ['Shift_JIS', 'shift_jis', '日本語のページ'],
    ['GB18030', 'gb18030', '中文页面标题'],
    ['GBK', 'gb18030', '中文页面标题'],
    ['Big5', 'big5', '繁體中文頁面'],
    ['EUC-KR', 'euc-kr', '한국어 페이지'],
    ['windows-1252', 'windows-1252', 'Café crème'],
  ])('honours %s from the header, from <meta charset> and from http-equiv', (label, enc, text) => {
    const html = (head: string) => iconv.encode(page(`${head}<title>${text}</title>`), enc);
    expect(previewOf(res(html(''), `text/html; charset=${label}`))?.title).toBe(text);
    expect(previewOf(res(html(`<meta charset="${label}">`)))?.title).toBe(text);
    expect(
      previewOf(res(html(`<meta http-equiv="Content-Type" content="text/html; charset=${label}">`)))
        ?.title,
    ).toBe(text);
  });

  it('a BOM wins over the header', () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(page('<title>ünïcödé</title>')),
    ]);
    expect(previewOf(res(body, 'text/html; charset=shift_jis'))?.title).toBe('ünïcödé');
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      iconv.encode(page('<title>漢字</title>'), 'utf-16le'),
    ]);
    expect(previewOf(res(utf16))?.title).toBe('漢字');
  });

  it('decodes a character cut by the boundary of the pieces it decodes at a time', () => {
    // 日本 in Shift_JIS, its first byte the last of the first 16 KiB piece.
    const before = Buffer.from(`<html><head><!--${'x'.repeat(16 * 1024 - 27)}--><title>`);
    expect(before.length).toBe(16 * 1024 - 1);
    const body = Buffer.concat([
      before,
      Buffer.from([0x93, 0xfa, 0x96, 0x7b]),
      Buffer.from('</title></head><body></body></html>'),
    ]);
    expect(previewOf(res(body, 'text/html; charset=shift_jis'))?.title).toBe('日本');
  });

  it('reads no further than the end of the head', () => {
    function* pieces() {
      yield '<html><head><title>Head</title></head><body><p>';
      throw new Error('read past the head');
    }
    expect(parseHtml(pieces(), 'https://site.example/')?.title).toBe('Head');
    function* opened() {
      yield '<html><title>No head</title><body>';
      throw new Error('read past the body tag');
    }
    expect(parseHtml(opened(), 'https://site.example/')?.title).toBe('No head');
  });

  it('previews an image as an image with its type and size', () => {
    expect(previewOf(res(Buffer.alloc(1234), 'image/png', 'https://site.example/p.png'))).toEqual({
      kind: 'image',
      title: null,
      description: null,
      imageUrl: 'https://site.example/p.png',
      siteName: null,
      mimeType: 'image/png',
      size: 1234,
    });
  });

  it('previews nothing else', () => {
    expect(previewOf(res('{"a":1}', 'application/json'))).toBeNull();
    expect(previewOf(res('<title>x</title>', 'text/plain'))).toBeNull();
    expect(previewOf(res(page('')))).toBeNull();
  });
});
