import type { ComponentChildren } from 'preact';

import type { Message } from '../api/types.ts';
import { parseMarkup, safeHref, type Block, type Inline } from '../markup/parse.ts';
import { pictureOf } from '../remote/host-image.ts';
import { isSelf } from '../remote/routing.ts';
import { findCustomEmoji } from '../state/emoji.ts';
import { conversations, me, serverIdOf, users } from '../state/store.ts';

// Message text as people wrote it, with the chat markup of web/src/markup/parse.ts (the one
// parser): bold, italic, strikethrough, code, code blocks, quotes, lists, links that are safe
// to follow, @mentions, #channels and custom emoji. Nothing is parsed as HTML; every piece is a
// text node or an element built here.

let namesOf: Record<string, unknown> | null = null;
let byName = new Map<string, { id: string }>();
/** Users by lower-case username, rebuilt only when the known users change. */
function userByName(name: string): { id: string } | undefined {
  if (namesOf !== users.value) {
    namesOf = users.value;
    byName = new Map(Object.values(users.value).map((u) => [u.username.toLowerCase(), u]));
  }
  return byName.get(name.toLowerCase());
}

/** What a piece of text is shown with: its message's mentions and workspace. */
interface Where {
  mentions: Message['mentions'];
  serverId: string | undefined;
  myId: string | undefined;
}

function inline(nodes: Inline[], w: Where): ComponentChildren[] {
  return nodes.map((n) => {
    switch (n.t) {
      case 'text':
        return n.text;
      case 'code':
        return <code>{n.text}</code>;
      case 'strong':
        return <strong>{inline(n.children, w)}</strong>;
      case 'em':
        return <em>{inline(n.children, w)}</em>;
      case 'del':
        return <del>{inline(n.children, w)}</del>;
      case 'link':
        return safeHref(n.href) ? (
          <a href={n.href} target="_blank" rel="noopener noreferrer nofollow ugc" title={n.href}>
            {inline(n.children, w)}
          </a>
        ) : (
          n.href
        );
      case 'emoji': {
        const e = findCustomEmoji(w.serverId, n.raw);
        return e ? (
          <CustomEmojiImage url={e.url} shortcode={e.shortcode} serverId={w.serverId} />
        ) : (
          n.raw
        );
      }
      case 'mention': {
        if (n.name === 'here' && w.mentions.here) {
          return <span class="mention mention-me">@here</span>;
        }
        const u = userByName(n.name);
        if (!u || !w.mentions.userIds.includes(u.id)) return n.raw;
        // On a host the person is `<name>@<relay>` there (isSelf).
        const mine = isSelf(u.id, w.myId);
        return <span class={mine ? 'mention mention-me' : 'mention'}>{n.raw}</span>;
      }
      case 'channel': {
        const ch = w.mentions.channelIds
          .map((id) => conversations.value[id])
          .find((c) => c?.name === n.name);
        return ch ? (
          <a class="mention" href={`/w/${ch.serverId}/${ch.id}`}>
            {n.raw}
          </a>
        ) : (
          n.raw
        );
      }
    }
  });
}

function blocks(list: Block[], w: Where): ComponentChildren[] {
  return list.map((b) => {
    switch (b.t) {
      case 'para':
        return <p>{inline(b.children, w)}</p>;
      case 'pre':
        return (
          <pre dir="ltr">
            <code data-lang={b.lang ?? undefined}>{b.text}</code>
          </pre>
        );
      case 'quote':
        return <blockquote>{blocks(b.children, w)}</blockquote>;
      case 'list': {
        const items = b.items.map((item) => <li>{inline(item, w)}</li>);
        return b.ordered ? <ol start={b.start}>{items}</ol> : <ul>{items}</ul>;
      }
    }
  });
}

/** Text with its markup, for a message (or the composer's preview of one). */
export function Markup(p: {
  text: string;
  mentions: Message['mentions'];
  serverId: string | undefined;
}) {
  const w: Where = { mentions: p.mentions, serverId: p.serverId, myId: me.value?.id };
  return (
    <div class="text" dir="auto">
      {blocks(parseMarkup(p.text), w)}
    </div>
  );
}

export function MessageText({ message }: { message: Message }) {
  return (
    <Markup
      text={message.text ?? ''}
      mentions={message.mentions}
      serverId={serverIdOf(message.conversationId).value}
    />
  );
}

/**
 * A custom emoji drawn in text: its `:name:` is the alternative text, so copying keeps it. One
 * of a workspace on another server is fetched through the relay; until then it reads `:name:`.
 */
export function CustomEmojiImage(p: { url: string; shortcode: string; serverId?: string }) {
  const src = pictureOf(p.url, p.serverId);
  return src ? (
    <img class="custom-emoji" src={src} alt={p.shortcode} title={p.shortcode} />
  ) : (
    <>{p.shortcode}</>
  );
}

// Formatters are made once: building an Intl formatter per message costs more than rendering it.
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const DAY = new Intl.DateTimeFormat(undefined, {
  weekday: 'long',
  month: 'long',
  day: 'numeric',
  year: 'numeric',
});
const FULL = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function timeOf(iso: string): string {
  return TIME.format(new Date(iso));
}

function dayKey(d: Date): number {
  return d.getFullYear() * 10_000 + d.getMonth() * 100 + d.getDate();
}

/** Today, Yesterday, or the date: the separators of a timeline. */
export function dayOf(iso: string): string {
  const d = new Date(iso);
  const key = dayKey(d);
  if (key === dayKey(new Date())) return 'Today';
  if (key === dayKey(new Date(Date.now() - 86_400_000))) return 'Yesterday';
  return DAY.format(d);
}

export function fullTime(iso: string): string {
  return FULL.format(new Date(iso));
}
