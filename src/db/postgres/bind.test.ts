import pg from 'pg';
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';

import { executionMessages } from './bind.js';

const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } })
  .utils;

/** node-postgres's own messages for the same execution (lib/query.js with a named statement). */
function nodePostgres(statement: string, values: unknown[], describe: boolean): Buffer {
  return Buffer.concat([
    serialize.bind({ portal: '', statement, values, binary: false, valueMapper: prepareValue }),
    ...(describe ? [serialize.describe({ type: 'P', name: '' })] : []),
    serialize.execute({ portal: '', rows: 0 }),
    serialize.sync(),
  ]);
}

/** `messages` with a Bind's parameter format codes (all text) given one per parameter. */
function withFormatCodes(messages: Buffer, statement: string, count: number): Buffer {
  const at = 1 + 4 + 1 + Buffer.byteLength(statement) + 1;
  expect(messages.readInt16BE(at)).toBe(0);
  const codes = Buffer.alloc(2 + 2 * count);
  codes.writeInt16BE(count, 0);
  const out = Buffer.concat([messages.subarray(0, at), codes, messages.subarray(at + 2)]);
  out.writeInt32BE(messages.readInt32BE(1) + 2 * count, 1);
  return out;
}

describe('executionMessages', () => {
  const texts: unknown[] = [
    'plain ascii',
    '',
    '\x7f edge of ascii',
    '\u0080 first past ascii',
    'é accents à la carte',
    '日本語のテキスト',
    'emoji 👋🏽 and a lone surrogate \ud800 end',
    'x'.repeat(70_000),
    `${'a'.repeat(63)}é`,
    `${'a'.repeat(64)}é`,
    `é${'a'.repeat(64)}`,
    'y'.repeat(64),
    'z'.repeat(65),
    `${'a'.repeat(30)}\u{1F44B}`,
    `${'é'.repeat(40_000)}z`,
    null,
    undefined,
    0,
    -12.5,
    12345678901234567890n,
    true,
    false,
    new Date('2026-11-28T03:04:05.678Z'),
    ['a', null, 'b c', ['nested']],
    { json: ['doc', 1, null], ключ: 'значение' },
    { toPostgres: () => 'from toPostgres' },
  ];

  it('gives node-postgres’s bytes for text parameters, without per-parameter format codes', () => {
    for (const describe of [false, true]) {
      for (let i = 0; i < texts.length; i += 1) {
        const values = texts.slice(i, i + 4);
        const ours = executionMessages('stmt_name', values, describe);
        const theirs = nodePostgres('stmt_name', values, describe);
        expect(withFormatCodes(ours, 'stmt_name', values.length).equals(theirs)).toBe(true);
      }
      const all = executionMessages('all', texts, describe);
      expect(
        withFormatCodes(all, 'all', texts.length).equals(nodePostgres('all', texts, describe)),
      ).toBe(true);
    }
  });

  it('gives node-postgres’s bytes, format codes included, when a parameter is binary', () => {
    const values = [
      'before',
      Buffer.from([0, 1, 0xfe, 0xff, 0x80]),
      null,
      'après',
      new Uint8Array([7, 8]),
    ];
    for (const describe of [false, true]) {
      const ours = executionMessages('with_bytes', values, describe);
      expect(ours.equals(nodePostgres('with_bytes', values, describe))).toBe(true);
    }
  });

  it('writes a statement with no parameters, and one whose name is not ASCII', () => {
    expect(executionMessages('none', [], false).equals(nodePostgres('none', [], false))).toBe(true);
    const ours = executionMessages('nommé', ['x'], true);
    expect(withFormatCodes(ours, 'nommé', 1).equals(nodePostgres('nommé', ['x'], true))).toBe(true);
  });

  it('gives each execution its own bytes, however large', () => {
    const first = executionMessages('first', ['one', 'é'], false);
    const copy = Buffer.from(first);
    const huge = ['h'.repeat(400_000), `${'é'.repeat(200_000)}!`];
    const large = executionMessages('large', huge, true);
    expect(withFormatCodes(large, 'large', 2).equals(nodePostgres('large', huge, true))).toBe(true);
    executionMessages('second', ['two', 'ü'.repeat(100)], true);
    expect(first.equals(copy)).toBe(true);
    const after = executionMessages('after', ['three'], false);
    expect(withFormatCodes(after, 'after', 1).equals(nodePostgres('after', ['three'], false))).toBe(
      true,
    );
  });

  it('throws what a parameter’s conversion throws', () => {
    const refused = {
      toPostgres: () => {
        throw new Error('this value cannot be sent');
      },
    };
    expect(() => executionMessages('s', ['ok', refused], false)).toThrow(/cannot be sent/);
  });
});
