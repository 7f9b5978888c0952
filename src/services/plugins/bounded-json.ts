// A JSON parser for untrusted plugin bundles (docs/plugins.md, "Parsing"). JSON.parse keeps the
// last of two equal keys without a word and has no bound on nesting or size, so a bundle is read
// by this one instead: RFC 8259 JSON, refused at the first duplicate key, past a nesting depth,
// past a count of keys or values, with the position or JSON pointer a developer can act on. It
// runs in time linear in the input and recurses at most `maxDepth` deep.

/** What the parser allows; the defaults are the bundle format's. */
export interface JsonLimits {
  /** Arrays and objects nested inside each other. */
  maxDepth: number;
  /** Keys of all objects together. */
  maxKeys: number;
  /** Values of every kind together (each key's value, each array element, the root). */
  maxValues: number;
}

export const BUNDLE_JSON_LIMITS: JsonLimits = { maxDepth: 32, maxKeys: 20_000, maxValues: 100_000 };

/** Why a text was refused: a message naming where (byte offset, line and column, or a pointer). */
export class JsonRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonRefusal';
  }
}

/** RFC 6901: a pointer from path segments (`~` and `/` escaped). */
export function jsonPointer(path: readonly (string | number)[]): string {
  return path.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Parses `text` as one JSON value within `limits`; throws JsonRefusal. */
export function parseBoundedJson(text: string, limits: JsonLimits = BUNDLE_JSON_LIMITS): unknown {
  let pos = 0;
  let keys = 0;
  let values = 0;
  const path: (string | number)[] = [];

  const where = (at: number) => {
    let line = 1;
    let col = 1;
    for (let i = 0; i < at && i < text.length; i++) {
      if (text.charCodeAt(i) === 10) {
        line++;
        col = 1;
      } else col++;
    }
    return `line ${line}, column ${col}`;
  };
  const fail = (what: string, at = pos): never => {
    throw new JsonRefusal(`not valid JSON: ${what} at ${where(at)}`);
  };
  const skipSpace = () => {
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 32 || c === 9 || c === 10 || c === 13) pos++;
      else return;
    }
  };
  const expected = (what: string) =>
    pos >= text.length
      ? fail(`the text ends where ${what} was expected`)
      : fail(`${JSON.stringify(text[pos])} where ${what} was expected`);

  const parseString = (): string => {
    const start = pos;
    pos++; // the opening quote
    let escaped = false;
    for (;;) {
      if (pos >= text.length) fail('a string is not closed', start);
      const c = text.charCodeAt(pos);
      if (c === 34) break;
      if (c < 0x20) fail('a control character inside a string');
      if (c === 92) {
        escaped = true;
        pos++;
      }
      pos++;
    }
    pos++;
    const raw = text.slice(start, pos);
    if (!escaped) return raw.slice(1, -1);
    try {
      return JSON.parse(raw) as string;
    } catch {
      return fail('a bad escape in a string', start);
    }
  };

  const countValue = () => {
    if (++values > limits.maxValues) {
      throw new JsonRefusal(
        `the bundle has more than ${limits.maxValues} JSON values (at ${jsonPointer(path) || '/'})`,
      );
    }
  };

  const parseValue = (depth: number): unknown => {
    skipSpace();
    countValue();
    const c = text[pos];
    if (c === '{' || c === '[') {
      if (depth >= limits.maxDepth) {
        throw new JsonRefusal(
          `the bundle nests objects and arrays more than ${limits.maxDepth} deep (at ${jsonPointer(path) || '/'})`,
        );
      }
      return c === '{' ? parseObject(depth + 1) : parseArray(depth + 1);
    }
    if (c === '"') return parseString();
    if (text.startsWith('true', pos)) return ((pos += 4), true);
    if (text.startsWith('false', pos)) return ((pos += 5), false);
    if (text.startsWith('null', pos)) return ((pos += 4), null);
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (m) {
      pos += m[0].length;
      return Number(m[0]);
    }
    return expected('a value');
  };

  const parseObject = (depth: number): Record<string, unknown> => {
    pos++;
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    const seen = new Set<string>();
    skipSpace();
    if (text[pos] === '}') return (pos++, out);
    for (;;) {
      skipSpace();
      if (text[pos] !== '"') expected('a key in double quotes');
      const key = parseString();
      if (++keys > limits.maxKeys) {
        throw new JsonRefusal(`the bundle has more than ${limits.maxKeys} object keys`);
      }
      if (seen.has(key)) {
        throw new JsonRefusal(
          `duplicate key ${JSON.stringify(key)} at ${jsonPointer([...path, key])}: each key may appear once in an object`,
        );
      }
      seen.add(key);
      skipSpace();
      if (text[pos] !== ':') expected("':' after a key");
      pos++;
      path.push(key);
      out[key] = parseValue(depth);
      path.pop();
      skipSpace();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === '}') return (pos++, { ...out });
      expected("',' or '}'");
    }
  };

  const parseArray = (depth: number): unknown[] => {
    pos++;
    const out: unknown[] = [];
    skipSpace();
    if (text[pos] === ']') return (pos++, out);
    for (;;) {
      path.push(out.length);
      out.push(parseValue(depth));
      path.pop();
      skipSpace();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === ']') return (pos++, out);
      expected("',' or ']'");
    }
  };

  if (text.charCodeAt(0) === 0xfeff) pos = 1;
  const value = parseValue(0);
  skipSpace();
  if (pos < text.length) fail('more text after the JSON value');
  return value;
}
