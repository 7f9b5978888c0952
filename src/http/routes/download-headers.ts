// Pure helpers for file downloads: RFC 6266 Content-Disposition and RFC 9110 Range.

/**
 * `attachment` with the name twice (RFC 6266): `filename*` in UTF-8 per RFC 8187 for clients that
 * read it (every current browser), and an ASCII `filename` for the rest, with every character
 * outside printable ASCII and the quote and backslash replaced by `_`.
 */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export type RangeResult =
  { kind: 'none' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One byte range of a `Range` header over a file of `size` bytes: `bytes=a-b`, `bytes=a-` or
 * `bytes=-n`. A header that is not one well-formed byte range is ignored (the whole file, as
 * RFC 9110 allows); a well-formed one that starts past the end is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return { kind: 'none' };
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'none' };
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return { kind: 'none' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end };
}
