import { createHash } from 'node:crypto';

import { BackupError } from './manifest.js';

// PostgreSQL's COPY text format (one row a line, columns split by tabs, `\N` for null, and
// backslash escapes) written from values read out of SQLite, and a checksum of a set of rows
// that does not depend on their order, so rows copied in one order and read back in another
// are compared exactly. PostgreSQL writes the same escapes it reads, so a row read back with
// `COPY ... TO STDOUT` is the very line that went in when every value arrived unchanged.

const SPECIAL = /[\\\b\f\n\r\t\v]/;
const SPECIALS = /[\\\b\f\n\r\t\v]/g;
const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/**
 * One value as COPY text. `where` names the table and column for the refusal of a value svc never
 * stores (binary data); integers arrive as bigint (better-sqlite3's safe integers), exactly.
 */
export function copyValue(value: unknown, where: () => string): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') {
    return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value;
  }
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  throw new BackupError(
    `${where()} holds binary data, which svc never stores there; the database may not be svc's or may be damaged (check it with sqlite3's "pragma integrity_check")`,
  );
}

const MASK = (1n << 64n) - 1n;

/** An order-free checksum of a set of lines: the sum of each line's sha256, by 64-bit lanes. */
export class RowSetDigest {
  rows = 0;
  private readonly lanes = [0n, 0n, 0n, 0n];

  /** Adds one line (without its newline). */
  add(line: string | Buffer): void {
    const h = createHash('sha256').update(line).digest();
    for (let i = 0; i < 4; i++) {
      this.lanes[i] = (this.lanes[i]! + h.readBigUInt64BE(i * 8)) & MASK;
    }
    this.rows++;
  }

  /** Adds every line of COPY output arriving in chunks (a line may span chunks). */
  async addLines(chunks: AsyncIterable<Buffer>): Promise<void> {
    let rest = Buffer.alloc(0);
    for await (const chunk of chunks) {
      const buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      let start = 0;
      for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
        this.add(buf.subarray(start, nl));
        start = nl + 1;
      }
      rest = Buffer.from(buf.subarray(start));
    }
    if (rest.length > 0) this.add(rest);
  }

  hex(): string {
    return this.lanes.map((l) => l.toString(16).padStart(16, '0')).join('');
  }
}
