import { signal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { EDIT, SEARCH_MEMBERS, SEND, START_TYPING } from '../api/queries.ts';
import type { Conversation, Message, User, WorkspaceMember } from '../api/types.ts';
import {
  addFiles,
  finalizeFiles,
  hasPending,
  readyFiles,
  sealedOf,
  sentFiles,
} from '../state/attachments.ts';
import { ComposerPreview, markupKey } from './composer-markup.tsx';
import { pictureOf } from '../remote/host-image.ts';
import { emojiOf } from '../state/emoji.ts';
import { conversations, me, rememberUsers, serverInfo, users, workspaces } from '../state/store.ts';
import { cachedConversation, cachedThread, updateShown } from '../state/timeline.ts';

import { canAttach, filesKey, PendingFiles } from './attachments.tsx';
import { e2ee } from '../e2ee/glue.ts';
import { Lock } from '../e2ee/ui.tsx';
import { composerActions } from './composer-actions.tsx';
import { searchEmoji, shortName } from './emoji-data.ts';
import { EmojiPicker } from './emoji-picker.tsx';
import { Icon } from './icons.tsx';
import { CommandForm } from './commands/command-form.tsx';
import { formRequest } from './commands/plugin-keybinds.ts';
import { runSlashLine, slashItems, type SlashTarget } from './commands/slash.ts';
import { ErrorText } from './toasts.tsx';

/** Asks a message box to edit a message (from a message's Edit action or the E key). */
export const editRequest = signal<{
  conversationId: string;
  thread: boolean;
  message: Message;
} | null>(null);

/** How often typing is announced while the person types (the server drops more within 3 s). */
const TYPING_EVERY_MS = 3000;

interface Suggestion {
  id: string;
  label: string;
  insert: string;
  detail?: string;
  /** A custom emoji's picture, shown before the label. */
  image?: string;
  /** A command or macro offered after `/`: choosing it opens its arguments by name. */
  target?: SlashTarget;
}

/**
 * The message box: several lines (Shift+Enter), Enter sends, Up in an empty box edits the last
 * own message, Escape cancels an edit. `@` suggests people, `:` suggests emoji.
 */
export function Composer(p: { conversation: Conversation; label: string; threadRootId?: string }) {
  const c = p.conversation;
  const [text, setText] = useState('');
  const [editing, setEditing] = useState<Message | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [sending, setSending] = useState(false);
  const [suggest, setSuggest] = useState<{
    items: Suggestion[];
    start: number;
    active: number;
  } | null>(null);
  const [emojiOpen, setEmojiOpen] = useState(false);
  const [preview, setPreview] = useState(false);
  const [command, setCommand] = useState<SlashTarget | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const lastTyping = useRef(0);
  const memberSearch = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const thread = !!p.threadRootId;
  const inputId = thread ? 'thread-input' : 'composer-input';
  const limit = serverInfo.value?.limits.messageBytes ?? 65536;
  const bytes = new TextEncoder().encode(text).length;
  const fileKey = filesKey(c.id, p.threadRootId);
  const withFiles = !editing && hasPending(fileKey);

  // A plugin keybind's command with arguments opens its form in this box.
  const asked = formRequest.value;
  useEffect(() => {
    if (!asked || asked.conversationId !== c.id || thread || c.encrypted) return;
    formRequest.value = null;
    setCommand(asked.target);
  }, [asked]);

  // Edit requests from the message list.
  const req = editRequest.value;
  useEffect(() => {
    if (!req || req.conversationId !== c.id || req.thread !== thread) return;
    // A message this browser could not read cannot be edited here.
    if (c.encrypted && req.message.unreadable) return;
    editRequest.value = null;
    setEditing(req.message);
    setText(req.message.text ?? '');
    area.current?.focus();
  }, [req]);

  // Another conversation or thread empties the box. Not on mount: effects run after the first
  // paint, and what was typed in between (a fast typist, a test) would be wiped.
  const target = `${c.id}:${p.threadRootId ?? ''}`;
  const shownTarget = useRef(target);
  useEffect(() => {
    if (shownTarget.current === target) return;
    shownTarget.current = target;
    setText('');
    setEditing(null);
    setError(null);
  }, [target]);

  useEffect(() => {
    const el = area.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [text]);

  const submit = async () => {
    // What the box holds now: a key pressed right after typing can come before the render that
    // would have put the typed text into `text`.
    const typed = area.current?.value ?? text;
    const body = typed.trim();
    if ((!body && !withFiles) || sending) return;
    if (new TextEncoder().encode(typed).length > limit) return;
    setSending(true);
    setError(null);
    try {
      if (c.encrypted && editing) {
        // An edit is a new encrypted message naming the one it replaces (../e2ee/client.ts).
        if (body !== editing.text) {
          const client = await e2ee();
          await client.edit(c.id, editing, body);
          updateShown(c.id, editing.id, client.withEdit);
        }
        setEditing(null);
        setText('');
        setSuggest(null);
        return;
      }
      if (c.encrypted) {
        // Encrypted on this browser before it leaves; no commands (they would send plain text).
        // Its files were encrypted before upload; their keys go inside the message.
        const files = withFiles ? await readyFiles(fileKey) : [];
        if (!body && !files.length) return;
        const client = await e2ee();
        // Images' previews take at most half of what the text leaves of the message.
        const room = Math.floor((limit - new TextEncoder().encode(body).length) / 2);
        const sent = await client.send(c.id, body, p.threadRootId ?? null, sealedOf(files, room));
        if (p.threadRootId) cachedThread(p.threadRootId)?.add(sent);
        else cachedConversation(c.id)?.add(sent);
        setText('');
        setSuggest(null);
        sentFiles(fileKey, files);
        await finalizeFiles(
          sent.id,
          files.filter((f) => f.sealed),
        );
        return;
      }
      if (!editing && typed.startsWith('/')) {
        // A command (or macro) line; a message may start with a space to be sent as text.
        await runSlashLine(c, typed, isDirect(c));
        setText('');
        setSuggest(null);
        return;
      }
      if (editing) {
        await gql(EDIT, { id: editing.id, text: body });
        setEditing(null);
      } else {
        // Files go out on the message itself: one sent alone carries no text.
        const files = withFiles ? await readyFiles(fileKey) : [];
        if (!body && !files.length) return;
        const d = await gql<{ sendMessage: Message }>(SEND, {
          input: {
            conversationId: c.id,
            text: body,
            threadRootId: p.threadRootId ?? null,
            ...(files.length ? { attachmentIds: files.map((f) => f.attachmentId) } : {}),
          },
        });
        sentFiles(fileKey, files);
        if (p.threadRootId) cachedThread(p.threadRootId)?.add(d.sendMessage);
        else cachedConversation(c.id)?.add(d.sendMessage);
      }
      setText('');
      setSuggest(null);
    } catch (err) {
      // The text and the files stay in the box, so nothing is lost.
      setError(err);
    } finally {
      setSending(false);
      area.current?.focus();
    }
  };

  const typingNow = () => {
    if (c.kind !== 'DIRECT' || editing) return;
    const now = Date.now();
    if (now - lastTyping.current < TYPING_EVERY_MS) return;
    lastTyping.current = now;
    // The server drops an announcement within 3 s of the one before as it received them; when a
    // late request makes it drop this one, try again a second later instead of 3 s.
    void gql<{ startTyping: boolean }>(START_TYPING, { id: c.id })
      .then((d) => {
        if (!d.startTyping) lastTyping.current = Date.now() - TYPING_EVERY_MS + 1000;
      })
      .catch(() => undefined);
  };

  const updateSuggestions = (value: string, caret: number) => {
    const before = value.slice(0, caret);
    const slash = editing ? null : /^\/([a-z0-9-]*)$/.exec(before);
    if (slash) {
      const q = slash[1] ?? '';
      void slashItems(c, q, isDirect(c))
        .then((found) => {
          // Only if the box still asks for this.
          if (area.current?.value.slice(0, area.current.selectionStart) !== before) return;
          const items = found.slice(0, 12).map((i) => ({
            id: `/${i.name}`,
            label: `/${i.name}`,
            detail: i.detail,
            insert: `/${i.name} `,
            target: i.target,
          }));
          setSuggest(items.length ? { items, start: 0, active: 0 } : null);
        })
        .catch(() => setSuggest(null));
      return;
    }
    const at = /(^|\s)@([A-Za-z0-9._-]*)$/.exec(before);
    if (at) {
      const q = (at[2] ?? '').toLowerCase();
      const items = mentionCandidates(c)
        .filter(
          (u) =>
            u.username.toLowerCase().startsWith(q) || u.displayName?.toLowerCase().startsWith(q),
        )
        .slice(0, 8)
        .map((u) => ({
          id: u.id,
          label: u.displayName ?? u.username,
          detail: `@${u.username}`,
          insert: `@${u.username} `,
        }));
      if (items.length < 8 && q && c.kind === 'CHANNEL') askMembers(q);
      if (c.kind === 'CHANNEL' && 'here'.startsWith(q)) {
        items.push({
          id: 'here',
          label: '@here',
          detail: 'everyone in the channel',
          insert: '@here ',
        });
      }
      setSuggest(items.length ? { items, start: caret - q.length - 1, active: 0 } : null);
      return;
    }
    const colon = /(^|\s):([a-z0-9_+-]{2,})$/.exec(before);
    if (colon) {
      const q = colon[2] ?? '';
      const custom = emojiOf(c.serverId)
        .filter((e) => e.name.includes(q.toLowerCase()))
        .slice(0, 4)
        .map((e) => ({
          id: e.shortcode,
          label: e.shortcode,
          image: pictureOf(e.url, c.serverId) ?? undefined,
          insert: `${e.shortcode} `,
        }));
      const items: Suggestion[] = [
        ...custom,
        ...searchEmoji(q, 8 - custom.length).map((e) => ({
          id: e[0],
          label: e[0],
          detail: `:${shortName(e)}:`,
          insert: `${e[0]} `,
        })),
      ];
      setSuggest(items.length ? { items, start: caret - q.length - 1, active: 0 } : null);
      return;
    }
    setSuggest(null);
  };

  // Members of the workspace the client has not met yet come from `searchMembers`; once known,
  // the suggestions are worked out again for what the box holds then.
  const askMembers = (q: string) => {
    if (workspaces.value.find((w) => w.id === c.serverId)?.isDirect !== false) return;
    clearTimeout(memberSearch.current);
    memberSearch.current = setTimeout(() => {
      gql<{ searchMembers: WorkspaceMember[] }>(SEARCH_MEMBERS, { serverId: c.serverId, query: q })
        .then((d) => {
          const before = Object.keys(users.value).length;
          rememberUsers(d.searchMembers.map((m) => m.user));
          const el = area.current;
          if (el && Object.keys(users.value).length > before) {
            updateSuggestions(el.value, el.selectionStart);
          }
        })
        .catch(() => undefined);
    }, 250);
  };

  const accept = (s: Suggestion) => {
    const el = area.current;
    if (!el || !suggest) return;
    const caret = el.selectionStart;
    const next = text.slice(0, suggest.start) + s.insert + text.slice(caret);
    setText(next);
    setSuggest(null);
    // A command with arguments (or a macro with parameters) opens its form, filled by name.
    const t = s.target;
    if (t && (t.kind === 'command' ? t.command.arguments.length : t.macro.params.length)) {
      setCommand(t);
      return;
    }
    const pos = suggest.start + s.insert.length;
    requestAnimationFrame(() => {
      el.focus();
      el.setSelectionRange(pos, pos);
    });
  };

  const insertAtCaret = (s: string) => {
    const el = area.current;
    const at = el ? el.selectionStart : text.length;
    setText(text.slice(0, at) + s + text.slice(at));
    requestAnimationFrame(() => {
      el?.focus();
      el?.setSelectionRange(at + s.length, at + s.length);
    });
  };

  const onKey = (e: KeyboardEvent) => {
    const marked = area.current ? markupKey(e, area.current) : null;
    if (marked !== null) {
      setText(marked);
      return;
    }
    if (suggest) {
      const n = suggest.items.length;
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        const d = e.key === 'ArrowDown' ? 1 : -1;
        setSuggest({ ...suggest, active: (suggest.active + d + n) % n });
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        accept(suggest.items[suggest.active] as Suggestion);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        setSuggest(null);
        return;
      }
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void submit();
    } else if (e.key === 'Escape' && editing) {
      e.preventDefault();
      e.stopPropagation();
      setEditing(null);
      setText('');
    } else if (e.key === 'ArrowUp' && !text) {
      const own = lastOwnMessage(c.id, p.threadRootId);
      if (own && !own.unreadable) {
        e.preventDefault();
        setEditing(own);
        setText(own.text ?? '');
      }
    }
  };

  const canWrite = c.isMember && !c.archived;
  const listId = `${inputId}-suggest`;
  const takeFiles = (files: FileList | null | undefined, e: Event) => {
    if (!files?.length || !canAttach(c) || !canWrite) return;
    e.preventDefault();
    addFiles(fileKey, c.id, files);
  };
  return (
    <div
      class={`composer${editing ? ' editing' : ''}`}
      onDragOver={(e) => {
        if (canAttach(c) && e.dataTransfer?.types.includes('Files')) e.preventDefault();
      }}
      onDrop={(e) => takeFiles(e.dataTransfer?.files, e)}
    >
      {editing && (
        <p class="editing-note" id={`${inputId}-editing`}>
          Editing a message. Enter saves, Escape cancels.
        </p>
      )}
      <ErrorText error={error} />
      {suggest && (
        <ul class="plain suggest" id={listId} role="listbox" aria-label="Suggestions">
          {suggest.items.map((s, i) => (
            <li
              key={s.id}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === suggest.active}
              class={i === suggest.active ? 'active' : ''}
              onPointerDown={(e) => {
                e.preventDefault();
                accept(s);
              }}
            >
              {s.image && <img class="custom-emoji" src={s.image} alt="" />}
              <span dir="auto">{s.label}</span> {s.detail && <span class="muted">{s.detail}</span>}
            </li>
          ))}
        </ul>
      )}
      {command && (
        <CommandForm
          target={command}
          c={c}
          onClose={() => {
            setCommand(null);
            setText('');
            area.current?.focus();
          }}
        />
      )}
      <PendingFiles fileKey={fileKey} />
      {preview && <ComposerPreview text={text} c={c} id={`${inputId}-preview`} />}
      <div class="composer-row">
        {c.encrypted && <Lock words="Messages here are end-to-end encrypted" />}
        {composerActions(c, p.threadRootId, insertAtCaret)}
        <textarea
          ref={area}
          id={inputId}
          rows={1}
          dir="auto"
          value={text}
          disabled={!canWrite}
          aria-label={p.label}
          aria-describedby={editing ? `${inputId}-editing` : undefined}
          aria-autocomplete="list"
          aria-controls={suggest ? listId : undefined}
          aria-activedescendant={suggest ? `${listId}-${suggest.active}` : undefined}
          placeholder={canWrite ? `${p.label}` : 'This conversation is read only'}
          onInput={(e) => {
            const el = e.currentTarget;
            setText(el.value);
            updateSuggestions(el.value, el.selectionStart);
            if (el.value) typingNow();
          }}
          onKeyDown={onKey}
          onPaste={(e) => takeFiles(e.clipboardData?.files, e)}
          onBlur={() => setTimeout(() => setSuggest(null), 150)}
        />
        <button
          type="button"
          class="icon"
          aria-label="Insert an emoji"
          aria-expanded={emojiOpen}
          disabled={!canWrite}
          onClick={() => setEmojiOpen(!emojiOpen)}
        >
          <Icon name="smile" />
        </button>
        <button
          type="button"
          class="icon"
          aria-label="Preview formatting"
          title="Preview: **bold**, _italic_, ~~strike~~, `code`, > quote, - list"
          aria-pressed={preview}
          aria-controls={preview ? `${inputId}-preview` : undefined}
          onClick={() => setPreview(!preview)}
        >
          <Icon name="eye" />
        </button>
        <button
          type="button"
          class="primary send"
          disabled={!canWrite || sending || (!text.trim() && !withFiles) || bytes > limit}
          onClick={() => void submit()}
        >
          {editing ? 'Save' : 'Send'}
        </button>
      </div>
      {bytes > limit * 0.9 && (
        <p class={bytes > limit ? 'error' : 'hint'} role="status">
          {bytes > limit
            ? `The message is ${bytes - limit} bytes too long for this server. Shorten it or split it in two.`
            : `${limit - bytes} bytes left.`}
        </p>
      )}
      {emojiOpen && (
        <EmojiPicker
          serverId={c.serverId}
          label="Insert an emoji"
          onPick={(e) => {
            setEmojiOpen(false);
            insertAtCaret(e);
          }}
          onClose={() => setEmojiOpen(false)}
        />
      )}
    </div>
  );
}

function isDirect(c: Conversation): boolean {
  return workspaces.value.find((w) => w.id === c.serverId)?.isDirect ?? c.kind !== 'CHANNEL';
}

function mentionCandidates(c: Conversation): User[] {
  const conv = conversations.value[c.id];
  const myId = me.value?.id;
  const ids = conv?.memberIds ?? c.memberIds;
  const list = ids.map((id) => users.value[id]).filter((u): u is User => !!u && u.id !== myId);
  // Others we know (from the workspace's member list) when the channel's own list is short.
  if (list.length < 8) {
    for (const u of Object.values(users.value)) {
      if (u.id !== myId && !ids.includes(u.id)) list.push(u);
    }
  }
  return list;
}

function lastOwnMessage(conversationId: string, threadRootId?: string): Message | undefined {
  const t = threadRootId ? cachedThread(threadRootId) : cachedConversation(conversationId);
  const myId = me.value?.id;
  const items = t?.items.value ?? [];
  for (let i = items.length - 1; i >= 0; i--) {
    const m = items[i]!;
    if (m.author?.id === myId && !m.isDeleted) return m;
  }
  return undefined;
}
