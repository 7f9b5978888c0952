// The chat markup of message text, parsed into a small tree the renderer turns into elements
// (web/src/ui/format.tsx). One parser for messages, the composer's preview and anything else
// that shows text. It never interprets HTML: `<b>` stays the four characters it is, and every
// piece ends up a text node or an element the renderer builds. Pure and bounded: emphasis looks
// at most MAX_SPAN characters ahead and nesting stops at MAX_DEPTH, so hostile text costs time
// in proportion to its length.
//
// Blocks: ``` fenced code ``` (a language word after the fence is kept), > quotes, lists
// (- item, * item, • item, 1. item), and paragraphs. Inline: `code`, **bold**, *italic* or
// _italic_ (not inside words, so snake_case stays), ~~strikethrough~~, [text](https://…) and bare
// http(s) links, @mentions, #channels and :emoji:. Links are made only for http, https and
// mailto addresses.

export type Inline =
  | { t: 'text'; text: string }
  | { t: 'code'; text: string }
  | { t: 'strong' | 'em' | 'del'; children: Inline[] }
  | { t: 'link'; href: string; children: Inline[] }
  | { t: 'mention'; name: string; raw: string }
  | { t: 'channel'; name: string; raw: string }
  | { t: 'emoji'; name: string; raw: string };

export type Block =
  | { t: 'para'; children: Inline[] }
  | { t: 'pre'; lang: string | null; text: string }
  | { t: 'quote'; children: Block[] }
  | { t: 'list'; ordered: boolean; start: number; items: Inline[][] };

const MAX_SPAN = 1000;
const MAX_DEPTH = 4;

const URL_CHARS = `[^\\s<>"'\`]*[^\\s<>"'\`.,;:!?)\\]}*_~]`;
const INLINE = new RegExp(
  [
    '(?<code>`[^`\\n]{1,' + MAX_SPAN + '}`)',
    `(?<mdlink>\\[(?<label>[^\\]\\n]{1,300})\\]\\((?<target>(?:https?:\\/\\/|mailto:)[^\\s()<>]{1,2000})\\))`,
    `(?<url>https?:\\/\\/${URL_CHARS})`,
    `(?<strong>\\*\\*(?=\\S)(?<strongIn>[^\\n]{0,${MAX_SPAN}}?\\S)\\*\\*)`,
    `(?<del>~~(?=\\S)(?<delIn>[^\\n]{0,${MAX_SPAN}}?\\S)~~)`,
    `(?<em1>(?<![\\p{L}\\p{N}*])\\*(?=[^\\s*])(?<em1In>[^*\\n]{0,${MAX_SPAN}}?[^\\s*])\\*(?![\\p{L}\\p{N}*]))`,
    `(?<em2>(?<![\\p{L}\\p{N}_])_(?=[^\\s_])(?<em2In>[^_\\n]{0,${MAX_SPAN}}?[^\\s_])_(?![\\p{L}\\p{N}_]))`,
    // `@name`, or `@name@server` for a person of another server (src/services/messages/text.ts).
    '(?<mention>(?<![\\p{L}\\p{N}_.])@[A-Za-z0-9][A-Za-z0-9._-]*(?:@[A-Za-z0-9.-]+(?::\\d{1,5})?)?)',
    '(?<channel>(?<![\\p{L}\\p{N}_&])#[a-z0-9_-]+)',
    '(?<emoji>:[A-Za-z0-9_+-]{2,32}:)',
  ].join('|'),
  'gu',
);

/** Inline markup of one piece of text (no blocks). */
export function parseInline(text: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  const push = (s: string) => {
    if (!s) return;
    const prev = out[out.length - 1];
    if (prev?.t === 'text') prev.text += s;
    else out.push({ t: 'text', text: s });
  };
  const re = new RegExp(INLINE.source, INLINE.flags);
  for (const m of text.matchAll(re)) {
    const g = m.groups ?? {};
    const at = m.index ?? 0;
    const raw = m[0];
    const nested = (inner: string): Inline[] =>
      depth >= MAX_DEPTH ? [{ t: 'text', text: inner }] : parseInline(inner, depth + 1);
    let node: Inline | null = null;
    let end = at + raw.length;
    if (g.code) node = { t: 'code', text: raw.slice(1, -1) };
    else if (g.mdlink) node = { t: 'link', href: g.target!, children: nested(g.label!) };
    else if (g.url) node = { t: 'link', href: raw, children: [{ t: 'text', text: raw }] };
    else if (g.strong) node = { t: 'strong', children: nested(g.strongIn!) };
    else if (g.del) node = { t: 'del', children: nested(g.delIn!) };
    else if (g.em1) node = { t: 'em', children: nested(g.em1In!) };
    else if (g.em2) node = { t: 'em', children: nested(g.em2In!) };
    else if (g.mention) {
      // A trailing dot or dash ends the sentence, not the name.
      const name = raw.slice(1).replace(/[._-]+$/, '');
      end = at + name.length + 1;
      node = { t: 'mention', name, raw: `@${name}` };
    } else if (g.channel) node = { t: 'channel', name: raw.slice(1), raw };
    else if (g.emoji) node = { t: 'emoji', name: raw.slice(1, -1), raw };
    if (!node) continue;
    push(text.slice(last, at));
    out.push(node);
    last = end;
  }
  push(text.slice(last));
  return out;
}

const FENCE = /^\s{0,3}```\s*([\w+#.-]{0,20})\s*$/;
const QUOTE = /^\s{0,3}>\s?/;
const BULLET = /^\s{0,3}[-*•]\s+(?=\S)/;
const NUMBER = /^\s{0,3}(\d{1,9})[.)]\s+(?=\S)/;

/** The whole text: blocks, each with its inline markup. */
export function parseMarkup(text: string, depth = 0): Block[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) blocks.push({ t: 'para', children: parseInline(para.join('\n')) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    const oneLine = /^\s{0,3}```([^`][\s\S]*?)```\s*$/.exec(line);
    if (oneLine) {
      flush();
      blocks.push({ t: 'pre', lang: null, text: oneLine[1]! });
      continue;
    }
    if (fence) {
      // A fence without its closing one is text, as typed.
      const close = lines.findIndex((l, j) => j > i && /^\s{0,3}```\s*$/.test(l));
      if (close > i) {
        flush();
        blocks.push({
          t: 'pre',
          lang: fence[1] || null,
          text: lines.slice(i + 1, close).join('\n'),
        });
        i = close;
        continue;
      }
    }
    if (QUOTE.test(line) && depth < MAX_DEPTH) {
      flush();
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) quoted.push(lines[i++]!.replace(QUOTE, ''));
      i--;
      blocks.push({ t: 'quote', children: parseMarkup(quoted.join('\n'), depth + 1) });
      continue;
    }
    const bullet = BULLET.test(line);
    const number = NUMBER.exec(line);
    if (bullet || number) {
      flush();
      const ordered = !bullet;
      const items: Inline[][] = [];
      const pattern = ordered ? NUMBER : BULLET;
      while (i < lines.length && pattern.test(lines[i]!)) {
        items.push(parseInline(lines[i++]!.replace(pattern, '')));
      }
      i--;
      blocks.push({ t: 'list', ordered, start: number ? Number(number[1]) : 1, items });
      continue;
    }
    para.push(line);
  }
  flush();
  return blocks;
}

/** Whether an address may be followed from a message: http, https and mailto only. */
export function safeHref(href: string): boolean {
  return /^(?:https?:\/\/[^\s]+|mailto:[^\s]+)$/i.test(href);
}
