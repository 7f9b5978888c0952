import type { ComponentChildren } from 'preact';

import type { Message } from '../api/types.ts';
import { findCustomEmoji } from '../state/emoji.ts';
import { conversations, me, users } from '../state/store.ts';

// Message text as people wrote it: plain text with line breaks, links, @mentions and #channels
// made visible. Nothing is parsed as HTML; every piece is a text node or an element we build.

const TOKEN =
  /(https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]}]|@[A-Za-z0-9][A-Za-z0-9._-]*|#[a-z0-9_-]+|:[A-Za-z0-9_+-]{2,32}:)/g;

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

export function MessageText({ message }: { message: Message }) {
  const text = message.text ?? '';
  const out: ComponentChildren[] = [];
  const myId = me.value?.id;
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    const token = m[0];
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    last = at + token.length;
    if (token.startsWith('http')) {
      out.push(
        <a href={token} target="_blank" rel="noopener noreferrer nofollow ugc">
          {token}
        </a>,
      );
    } else if (token.startsWith(':')) {
      const e = findCustomEmoji(conversations.value[message.conversationId]?.serverId, token);
      out.push(e ? <CustomEmojiImage url={e.url} shortcode={e.shortcode} /> : token);
    } else if (token.startsWith('@')) {
      const name = token.slice(1).replace(/[._-]+$/, '');
      const u = userByName(name);
      const mentioned = u && message.mentions.userIds.includes(u.id);
      if (name === 'here' && message.mentions.here) {
        out.push(<span class="mention mention-me">@here</span>);
      } else if (mentioned) {
        out.push(<span class={u.id === myId ? 'mention mention-me' : 'mention'}>@{name}</span>);
      } else {
        out.push(token);
        continue;
      }
      if (token.length > name.length + 1) out.push(token.slice(name.length + 1));
    } else {
      const name = token.slice(1);
      const ch = message.mentions.channelIds
        .map((id) => conversations.value[id])
        .find((c) => c?.name === name);
      out.push(
        ch ? (
          <a class="mention" href={`/w/${ch.serverId}/${ch.id}`}>
            {token}
          </a>
        ) : (
          token
        ),
      );
    }
  }
  if (last < text.length) out.push(text.slice(last));
  return (
    <div class="text" dir="auto">
      {out}
    </div>
  );
}

/** A custom emoji drawn in text: its `:name:` is the alternative text, so copying keeps it. */
export function CustomEmojiImage({ url, shortcode }: { url: string; shortcode: string }) {
  return <img class="custom-emoji" src={url} alt={shortcode} title={shortcode} />;
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
