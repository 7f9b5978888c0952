import { describe, expect, it } from 'vitest';

import { parseInline, parseMarkup, safeHref, type Inline } from '../../web/src/markup/parse.js';

// The one parser of chat markup (web/src/markup/parse.ts): a table of inputs, hostile ones
// included. Nothing is ever HTML: text stays text, and links go only to http(s) and mailto.

const text = (t: string): Inline => ({ t: 'text', text: t });

const INLINE: Array<[string, Inline[]]> = [
  ['plain words', [text('plain words')]],
  ['**bold** end', [{ t: 'strong', children: [text('bold')] }, text(' end')]],
  ['an *italic* word', [text('an '), { t: 'em', children: [text('italic')] }, text(' word')]],
  ['_also italic_', [{ t: 'em', children: [text('also italic')] }]],
  ['snake_case_name stays', [text('snake_case_name stays')]],
  ['2*3*4 stays', [text('2*3*4 stays')]],
  ['~~gone~~', [{ t: 'del', children: [text('gone')] }]],
  ['run `npm ci`', [text('run '), { t: 'code', text: 'npm ci' }]],
  ['`**not bold**`', [{ t: 'code', text: '**not bold**' }]],
  [
    '**bold _and italic_**',
    [{ t: 'strong', children: [text('bold '), { t: 'em', children: [text('and italic')] }] }],
  ],
  ['** not bold **', [text('** not bold **')]],
  [
    'see https://example.com/a?b=1.',
    [
      text('see '),
      {
        t: 'link',
        href: 'https://example.com/a?b=1',
        children: [text('https://example.com/a?b=1')],
      },
      text('.'),
    ],
  ],
  [
    '[the docs](https://example.com/docs)',
    [{ t: 'link', href: 'https://example.com/docs', children: [text('the docs')] }],
  ],
  ['hi @bob.', [text('hi '), { t: 'mention', name: 'bob', raw: '@bob' }, text('.')]],
  [
    'hi @ann@chat.example.org:8443.',
    [
      text('hi '),
      { t: 'mention', name: 'ann@chat.example.org:8443', raw: '@ann@chat.example.org:8443' },
      text('.'),
    ],
  ],
  [
    '@ann@b.example: hi',
    [{ t: 'mention', name: 'ann@b.example', raw: '@ann@b.example' }, text(': hi')],
  ],
  ['mail bob@example.com', [text('mail bob@example.com')]],
  ['in #general', [text('in '), { t: 'channel', name: 'general', raw: '#general' }]],
  [
    'yay :party-parrot:',
    [text('yay '), { t: 'emoji', name: 'party-parrot', raw: ':party-parrot:' }],
  ],
  // Hostile: HTML, script URLs, unbalanced and nested markers.
  ['<script>alert(1)</script>', [text('<script>alert(1)</script>')]],
  ['<img src=x onerror=alert(1)>', [text('<img src=x onerror=alert(1)>')]],
  ['[click](javascript:alert(1))', [text('[click](javascript:alert(1))')]],
  ['[x](data:text/html,<b>hi</b>)', [text('[x](data:text/html,<b>hi</b>)')]],
  ['javascript:alert(1)', [text('javascript:alert(1)')]],
  ['&lt;b&gt; &amp;', [text('&lt;b&gt; &amp;')]],
  ['**unclosed', [text('**unclosed')]],
  ['`unclosed', [text('`unclosed')]],
  [
    'https://x.y/"onmouseover="alert(1)',
    [
      { t: 'link', href: 'https://x.y/', children: [text('https://x.y/')] },
      text('"onmouseover="alert(1)'),
    ],
  ],
];

describe('chat markup', () => {
  it.each(INLINE)('parses %j', (input, expected) => {
    expect(parseInline(input)).toEqual(expected);
  });

  it('parses blocks: code fences, quotes, lists and paragraphs', () => {
    const blocks = parseMarkup(
      'Intro line\n```ts\nconst a = **1**;\n<b>\n```\n> quoted **bold**\n> more\n- one\n- two\n3. three\n4. four\nend',
    );
    expect(blocks).toEqual([
      { t: 'para', children: [text('Intro line')] },
      { t: 'pre', lang: 'ts', text: 'const a = **1**;\n<b>' },
      {
        t: 'quote',
        children: [
          {
            t: 'para',
            children: [text('quoted '), { t: 'strong', children: [text('bold')] }, text('\nmore')],
          },
        ],
      },
      { t: 'list', ordered: false, start: 1, items: [[text('one')], [text('two')]] },
      { t: 'list', ordered: true, start: 3, items: [[text('three')], [text('four')]] },
      { t: 'para', children: [text('end')] },
    ]);
  });

  it('keeps an unclosed fence as text and a one-line fence as code', () => {
    expect(parseMarkup('```\nnot closed')).toEqual([
      { t: 'para', children: [text('```\nnot closed')] },
    ]);
    expect(parseMarkup('```let x = 1```')).toEqual([{ t: 'pre', lang: null, text: 'let x = 1' }]);
  });

  it('stops nesting quotes and emphasis at a bounded depth', () => {
    const deep = parseMarkup('>'.repeat(50) + ' deep');
    let depth = 0;
    let b = deep[0];
    while (b?.t === 'quote') {
      depth++;
      b = b.children[0];
    }
    expect(depth).toBeLessThanOrEqual(5);
    expect(JSON.stringify(deep)).toContain('deep');
    const nested = '**_~~**_~~'.repeat(20) + 'x' + '~~_**'.repeat(40);
    expect(() => parseInline(nested)).not.toThrow();
  });

  it('handles long hostile text in one pass', () => {
    // 64 KiB of unclosed markers and near-links: parsed, every character kept.
    for (const unit of ['**a', '*_~`[', '[a](', 'https://', '@', ':a', '> - 1. ```']) {
      const input = unit.repeat(Math.ceil(65_536 / unit.length));
      const flat = JSON.stringify(parseMarkup(input));
      expect(flat.length).toBeGreaterThan(input.length / 2);
    }
  });

  it('follows only http, https and mailto addresses', () => {
    expect(safeHref('https://example.com')).toBe(true);
    expect(safeHref('mailto:a@b.c')).toBe(true);
    for (const bad of [
      'javascript:alert(1)',
      'JAVASCRIPT:x',
      'data:text/html,x',
      'vbscript:x',
      '//evil.com',
      '/local',
    ]) {
      expect(safeHref(bad)).toBe(false);
    }
  });
});
