import { createHash, sign, verify, type KeyObject } from 'node:crypto';

// RFC 9421 HTTP Message Signatures, the part this server uses: Ed25519 signatures over derived
// components and header fields, the `Signature-Input` and `Signature` dictionaries (RFC 8941),
// and RFC 9530's `Content-Digest` with sha-256. Written from the RFCs; the tests check it against
// RFC 9421's own Ed25519 vector (appendix B.2.6) and against an independent implementation.

/** A request as signed: its absolute target URI and its header fields, names lower-case. */
export interface HttpMessage {
  method: string;
  /** Absolute URI the request targets, e.g. `https://b.example/s2s/v1/forward/api`. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export type ParamValue = string | number | boolean;

/** One member of `Signature-Input`: the covered components and the signature parameters. */
export interface SignatureInput {
  components: string[];
  /** Parameters in the order given (`created`, `expires`, `nonce`, `keyid`, `alg`, `tag`). */
  params: Array<[string, ParamValue]>;
}

export class SignatureFormatError extends Error {}

/** `sha-256=:<base64>:` of a body (RFC 9530). */
export function contentDigest(body: Buffer): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/** Whether a `Content-Digest` field carries a sha-256 member that matches `body`. */
export function digestMatches(field: string | undefined, body: Buffer): boolean {
  if (!field) return false;
  const expected = createHash('sha256').update(body).digest('base64');
  for (const member of field.split(',')) {
    const m = /^\s*sha-256=:([A-Za-z0-9+/=]*):\s*$/.exec(member);
    if (m && m[1] === expected) return true;
  }
  return false;
}

/** The serialized inner list with parameters, as in `Signature-Input` and `@signature-params`. */
export function serializeInput(input: SignatureInput): string {
  const list = `(${input.components.map((c) => sfString(c)).join(' ')})`;
  return list + input.params.map(([k, v]) => `;${k}=${serializeParam(v)}`).join('');
}

function serializeParam(v: ParamValue): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? '?1' : '?0';
  return sfString(v);
}

function sfString(s: string): string {
  if (!/^[\x20-\x7e]*$/.test(s)) throw new SignatureFormatError('not an sf-string');
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The value of one component of `message` (RFC 9421 section 2); throws when absent. */
export function componentValue(name: string, message: HttpMessage): string {
  const url = new URL(message.url);
  switch (name) {
    case '@method':
      return message.method.toUpperCase();
    case '@target-uri':
      return url.toString();
    case '@authority':
      return url.host.toLowerCase();
    case '@scheme':
      return url.protocol.slice(0, -1).toLowerCase();
    case '@path':
      return url.pathname || '/';
    case '@query':
      return url.search || '?';
    case '@request-target':
      return `${url.pathname || '/'}${url.search}`;
    default: {
      if (name.startsWith('@') || name !== name.toLowerCase()) {
        throw new SignatureFormatError(`component ${name} is not supported`);
      }
      const raw = message.headers[name];
      if (raw === undefined) throw new SignatureFormatError(`header ${name} is not in the message`);
      const values = Array.isArray(raw) ? raw : [raw];
      // Field values are trimmed and multiple lines joined with ", " (section 2.1).
      return values.map((v) => v.trim().replace(/\s*\r?\n\s*/g, ' ')).join(', ');
    }
  }
}

/** The signature base (RFC 9421 section 2.5): one line per component, then the params. */
export function signatureBase(message: HttpMessage, input: SignatureInput): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const c of input.components) {
    if (seen.has(c)) throw new SignatureFormatError(`component ${c} is listed twice`);
    seen.add(c);
    lines.push(`${sfString(c)}: ${componentValue(c, message)}`);
  }
  lines.push(`"@signature-params": ${serializeInput(input)}`);
  return lines.join('\n');
}

/** Signs `message` with an Ed25519 key; answers the two header fields to add. */
export function signMessage(
  message: HttpMessage,
  input: SignatureInput,
  key: KeyObject,
  label = 'sig1',
): { 'signature-input': string; signature: string } {
  const base = signatureBase(message, input);
  const sig = sign(null, Buffer.from(base, 'utf8'), key);
  return {
    'signature-input': `${label}=${serializeInput(input)}`,
    signature: `${label}=:${sig.toString('base64')}:`,
  };
}

/** Verifies one labelled signature of `message` with an Ed25519 public key. */
export function verifySignature(
  message: HttpMessage,
  input: SignatureInput,
  signature: Buffer,
  key: KeyObject,
): boolean {
  let base: string;
  try {
    base = signatureBase(message, input);
  } catch {
    return false;
  }
  try {
    return verify(null, Buffer.from(base, 'utf8'), key, signature);
  } catch {
    return false;
  }
}

// --- RFC 8941 dictionaries, the subset RFC 9421 puts in its two fields ---

/** Parses `Signature-Input`: label -> inner list of strings with parameters. */
export function parseSignatureInputField(field: string): Map<string, SignatureInput> {
  const p = new Parser(field);
  const out = new Map<string, SignatureInput>();
  p.ows();
  while (!p.done()) {
    const label = p.key();
    p.expect('=');
    p.expect('(');
    const components: string[] = [];
    for (;;) {
      p.sp();
      if (p.peek() === ')') break;
      components.push(p.string());
      if (p.peek() !== ')' && p.peek() !== ' ') throw new SignatureFormatError('bad inner list');
    }
    p.expect(')');
    const params = p.params();
    out.set(label, { components, params });
    p.ows();
    if (p.done()) break;
    p.expect(',');
    p.ows();
  }
  return out;
}

/** Parses `Signature`: label -> the signature's bytes. */
export function parseSignatureField(field: string): Map<string, Buffer> {
  const p = new Parser(field);
  const out = new Map<string, Buffer>();
  p.ows();
  while (!p.done()) {
    const label = p.key();
    p.expect('=');
    out.set(label, p.bytes());
    p.params();
    p.ows();
    if (p.done()) break;
    p.expect(',');
    p.ows();
  }
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}
  done(): boolean {
    return this.i >= this.s.length;
  }
  peek(): string {
    return this.s[this.i] ?? '';
  }
  expect(ch: string): void {
    if (this.s[this.i] !== ch) throw new SignatureFormatError(`expected "${ch}" at ${this.i}`);
    this.i++;
  }
  ows(): void {
    while (this.s[this.i] === ' ' || this.s[this.i] === '\t') this.i++;
  }
  sp(): void {
    while (this.s[this.i] === ' ') this.i++;
  }
  key(): string {
    const m = /^[a-z*][a-z0-9_.*-]*/.exec(this.s.slice(this.i));
    if (!m) throw new SignatureFormatError(`expected a key at ${this.i}`);
    this.i += m[0].length;
    return m[0];
  }
  string(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      const ch = this.s[this.i++];
      if (ch === undefined) throw new SignatureFormatError('unterminated string');
      if (ch === '"') return out;
      if (ch === '\\') {
        const next = this.s[this.i++];
        if (next !== '"' && next !== '\\') throw new SignatureFormatError('bad escape');
        out += next;
      } else if (ch < ' ' || ch > '~') {
        throw new SignatureFormatError('bad character in string');
      } else {
        out += ch;
      }
    }
  }
  bytes(): Buffer {
    this.expect(':');
    const end = this.s.indexOf(':', this.i);
    if (end === -1) throw new SignatureFormatError('unterminated byte sequence');
    const text = this.s.slice(this.i, end);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new SignatureFormatError('bad base64');
    this.i = end + 1;
    return Buffer.from(text, 'base64');
  }
  params(): Array<[string, ParamValue]> {
    const out: Array<[string, ParamValue]> = [];
    while (this.peek() === ';') {
      this.i++;
      this.sp();
      const k = this.key();
      let v: ParamValue = true;
      if (this.peek() === '=') {
        this.i++;
        v = this.bare();
      }
      out.push([k, v]);
    }
    return out;
  }
  private bare(): ParamValue {
    const ch = this.peek();
    if (ch === '"') return this.string();
    if (ch === '?') {
      this.i++;
      const b = this.s[this.i++];
      if (b !== '0' && b !== '1') throw new SignatureFormatError('bad boolean');
      return b === '1';
    }
    const num = /^-?\d{1,15}/.exec(this.s.slice(this.i));
    if (num) {
      this.i += num[0].length;
      if (this.peek() === '.') throw new SignatureFormatError('decimals are not used here');
      return Number(num[0]);
    }
    const token = /^[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]*/.exec(this.s.slice(this.i));
    if (!token) throw new SignatureFormatError(`bad value at ${this.i}`);
    this.i += token[0].length;
    return token[0];
  }
}

/** A parameter's value, if present and of the type asked for. */
export function param(input: SignatureInput, name: string): ParamValue | undefined {
  return input.params.find(([k]) => k === name)?.[1];
}
