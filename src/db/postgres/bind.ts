import { loadPg } from './module.js';

type PrepareValue = (value: unknown) => unknown;
let prepareValueOfPg: PrepareValue | null = null;

/**
 * How node-postgres turns a parameter into its text (lib/utils.js, on the module as `utils`);
 * taken from pg on first use (module.ts).
 */
function prepareValue(value: unknown): unknown {
  prepareValueOfPg ??= (loadPg() as unknown as { utils: { prepareValue: PrepareValue } }).utils
    .prepareValue;
  return prepareValueOfPg(value);
}

/** Any character outside ASCII: such a text is encoded to UTF-8 before it is written. */
const NOT_ASCII = /[\u0080-\uffff]/;

/** Execute (the unnamed portal, every row), then Sync. */
const EXECUTE_SYNC = 'E\0\0\0\x09\0\0\0\0\0' + 'S\0\0\0\x04';
/** Describe of the unnamed portal. */
const DESCRIBE_PORTAL = 'D\0\0\0\x06P\0';

/** `n` as four bytes, most significant first, one character each. */
function int32(n: number): string {
  return String.fromCharCode((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** `n` as two bytes. */
function int16(n: number): string {
  return String.fromCharCode((n >>> 8) & 0xff, n & 0xff);
}

/** `text`'s UTF-8 bytes, one character each (unchanged when it is ASCII). */
function utf8Bytes(text: string): string {
  return NOT_ASCII.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text;
}

/**
 * The messages of one execution of the named statement `statement` with `values`: Bind (the
 * unnamed portal, text results), Describe when `describe`, Execute and Sync, as one buffer.
 *
 * node-postgres writes a Bind parameter by parameter, measuring each text and writing it with a
 * call into C++ each (two per parameter), in a buffer that grows by copying, and then writes
 * Execute and Sync to the socket separately: about 91,000 instructions of a send's thirty
 * parameters (bench `instructions`, round fourteen). Here the messages are made as one string of
 * bytes, one character per byte (ASCII texts, the most, are their own bytes), and turned into a
 * buffer once. The bytes are node-postgres's, except that a Bind without binary parameters gives
 * no format codes (PostgreSQL reads that as text for all) where node-postgres gives a 0 each.
 *
 * A value is turned into text as node-postgres turns it (`prepareValue`); a string is its own
 * text. Throws what that throws (a `toPostgres` that fails), before anything is written.
 */
export function executionMessages(
  statement: string,
  values: readonly unknown[],
  describe: boolean,
): Buffer {
  let params = '';
  let formats = '';
  let binary = false;
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i];
    const text = typeof value === 'string' ? value : prepareValue(value);
    if (text === null || text === undefined) {
      params += '\xff\xff\xff\xff';
      formats += '\0\0';
    } else if (typeof text === 'string') {
      const bytes = utf8Bytes(text);
      params += int32(bytes.length) + bytes;
      formats += '\0\0';
    } else {
      // A Buffer: sent as it is, in binary format.
      const bytes = (text as Buffer).toString('latin1');
      params += int32(bytes.length) + bytes;
      formats += '\0\x01';
      binary = true;
    }
  }
  const body =
    '\0' + // the unnamed portal
    utf8Bytes(statement) +
    '\0' +
    (binary ? int16(values.length) + formats : '\0\0') +
    int16(values.length) +
    params +
    '\0\x01\0\0'; // one result format code: text
  const messages =
    'B' + int32(body.length + 4) + body + (describe ? DESCRIBE_PORTAL : '') + EXECUTE_SYNC;
  return Buffer.from(messages, 'latin1');
}
