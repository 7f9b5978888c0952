import { Parser } from 'htmlparser2';
import iconv from 'iconv-lite';

import type { LinkPreviewPayload } from '../../events/catalog.js';

// What a fetched page previews as (docs/link-previews.md, "Parsing"): Open Graph first, then
// Twitter cards, then `<title>` and `<meta name=description>`. Only `text/html` is parsed, with
// htmlparser2's streaming tokenizer; images preview as themselves.

/** A preview as stored and served, without the link it is of. */
export type PreviewData = Omit<LinkPreviewPayload, 'url'>;

/** Longest text kept per field, in characters; longer text is cut and ends with an ellipsis. */
export const TEXT_LIMITS = { title: 300, description: 1000, siteName: 100, url: 2048 } as const;

/** The media type and charset of a Content-Type header, lower case. */
export function contentType(header: string | undefined): { type: string; charset: string | null } {
  const [type = '', ...params] = (header ?? '').split(';');
  let charset: string | null = null;
  for (const p of params) {
    const [k, v] = p.split('=', 2);
    if (k?.trim().toLowerCase() === 'charset' && v) {
      charset = v
        .trim()
        .replace(/^["']|["']$/g, '')
        .toLowerCase();
    }
  }
  return { type: type.trim().toLowerCase(), charset };
}

// WHATWG Encoding labels that mean another decoder than the label's own name in iconv-lite.
const DECODERS: Record<string, string> = {
  'us-ascii': 'windows-1252',
  ascii: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  latin1: 'windows-1252',
  gb2312: 'gb18030',
  gbk: 'gb18030',
  'x-gbk': 'gb18030',
  big5: 'big5hkscs',
  'big5-hkscs': 'big5hkscs',
  'euc-kr': 'cp949',
  'ks_c_5601-1987': 'cp949',
  shift_jis: 'cp932',
  sjis: 'cp932',
  'x-sjis': 'cp932',
  'windows-31j': 'cp932',
  ms_kanji: 'cp932',
};

function decoderFor(label: string | null): string | null {
  if (!label) return null;
  const name = DECODERS[label] ?? label;
  return iconv.encodingExists(name) ? name : null;
}

/** A byte-order mark's encoding and length. */
function bom(body: Buffer): { encoding: string; length: number } | null {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf)
    return { encoding: 'utf-8', length: 3 };
  if (body[0] === 0xff && body[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (body[0] === 0xfe && body[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return null;
}

/**
 * `<meta charset>` or `<meta http-equiv=content-type content="...; charset=...">` in the first
 * 4 KiB, read as Latin-1: every encoding a page may declare this way keeps ASCII tags as ASCII.
 */
function metaCharset(body: Buffer): string | null {
  let found: string | null = null;
  const parser = new Parser({
    onopentag(name, attrs) {
      if (found || name !== 'meta') return;
      if (attrs.charset) found = attrs.charset.trim().toLowerCase();
      else if (attrs['http-equiv']?.toLowerCase() === 'content-type' && attrs.content) {
        found = contentType(`x;${attrs.content.split(';').slice(1).join(';')}`).charset;
      }
    },
  });
  parser.write(body.subarray(0, 4096).toString('latin1'));
  parser.end();
  return found;
}

/** Bytes decoded and tokenized at a time; parsing stops at the end of the head. */
const CHUNK_BYTES = 16 * 1024;

/**
 * The page's text, a piece at a time: BOM first, then the header's charset, then
 * `<meta charset>`, then UTF-8. Decoding goes only as far as the parser asks.
 */
export function* decodeHtml(body: Buffer, headerCharset: string | null): Generator<string> {
  const mark = bom(body);
  const encoding = mark
    ? mark.encoding
    : (decoderFor(headerCharset) ?? decoderFor(metaCharset(body)) ?? 'utf-8');
  const decoder = iconv.getDecoder(encoding);
  for (let at = mark?.length ?? 0; at < body.length; at += CHUNK_BYTES) {
    const text = decoder.write(body.subarray(at, at + CHUNK_BYTES));
    if (text) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

// C0 and C1 controls, DEL, and the bidirectional overrides that could reorder text around them.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text as shown: controls out, whitespace collapsed, trimmed, cut to `max` characters. */
export function cleanText(raw: string | undefined | null, max: number): string | null {
  if (raw === undefined || raw === null) return null;
  const text = raw.replace(CONTROLS, ' ').replace(/\s+/g, ' ').trim();
  if (text === '') return null;
  const chars = [...text];
  return chars.length <= max
    ? text
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/** An http(s) URL made absolute against `base`, or null. */
export function absoluteUrl(raw: string | undefined | null, base: string): string | null {
  if (!raw) return null;
  try {
    const url = new URL(raw.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    url.username = '';
    url.password = '';
    const text = url.toString();
    return text.length <= TEXT_LIMITS.url ? text : null;
  } catch {
    return null;
  }
}

/**
 * Parses a page's head into a preview; null when it has nothing to show. The text comes in
 * pieces, and the tokenizer stops at `</head>` or `<body>`: the rest of a 1 MiB page is neither
 * decoded nor tokenized (about 13 ms of the event loop for a page that size).
 */
export function parseHtml(html: string | Iterable<string>, finalUrl: string): PreviewData | null {
  const meta = new Map<string, string>();
  let title = '';
  let inTitle = false;
  let titleSeen = false;
  let done = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (done) return;
        if (name === 'title' && !titleSeen) inTitle = true;
        if (name === 'meta') {
          const key = (attrs.property ?? attrs.name ?? '').trim().toLowerCase();
          const value = attrs.content;
          // The first of a repeated property wins (og:image may list several).
          if (key && value !== undefined && !meta.has(key)) meta.set(key, value);
        }
        // The preview lives in the head; a body's worth of tokens is no use.
        if (name === 'body') stop();
      },
      ontext(text) {
        if (inTitle) title += text;
      },
      onclosetag(name) {
        if (name === 'title' && inTitle) {
          inTitle = false;
          titleSeen = true;
        }
        if (name === 'head') stop();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  const stop = () => {
    done = true;
    parser.pause();
  };
  for (const piece of typeof html === 'string' ? [html] : html) {
    parser.write(piece);
    if (done) break;
  }
  if (!done) parser.end();
  const pick = (...keys: string[]) => keys.map((k) => meta.get(k)).find((v) => v?.trim());
  const preview: PreviewData = {
    kind: 'page',
    title: cleanText(pick('og:title', 'twitter:title') ?? title, TEXT_LIMITS.title),
    description: cleanText(
      pick('og:description', 'twitter:description', 'description'),
      TEXT_LIMITS.description,
    ),
    imageUrl: absoluteUrl(
      pick('og:image', 'og:image:url', 'og:image:secure_url', 'twitter:image', 'twitter:image:src'),
      finalUrl,
    ),
    siteName: cleanText(pick('og:site_name', 'application-name'), TEXT_LIMITS.siteName),
    mimeType: null,
    size: null,
  };
  return preview.title || preview.description || preview.imageUrl ? preview : null;
}

/** Media types previewed as an image. */
const IMAGE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/svg+xml',
]);

/** A fetched response as a preview: pages parsed, images described; anything else null. */
export function previewOf(res: {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}): PreviewData | null {
  const { type, charset } = contentType(res.headers['content-type']);
  if (type === 'text/html' || type === 'application/xhtml+xml') {
    return parseHtml(decodeHtml(res.body, charset), res.url);
  }
  if (IMAGE_TYPES.has(type)) {
    return {
      kind: 'image',
      title: null,
      description: null,
      imageUrl: absoluteUrl(res.url, res.url),
      siteName: null,
      mimeType: type,
      size: res.body.length,
    };
  }
  return null;
}
