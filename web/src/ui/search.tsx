import { useEffect, useRef, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { SEARCH_MESSAGES } from '../api/queries.ts';
import type { MessageSearchHit } from '../api/types.ts';
import { conversations, rememberUsers, titleOf, workspaces } from '../state/store.ts';
import { lastServer, searchOpen } from '../state/view.ts';
import { hostOfId } from '../remote/routing.ts';

import { Dialog } from './dialog.tsx';
import { jumpToMessage } from './jump-to-message.ts';
import { applySuggestion, suggestionsFor } from './search-suggestions.tsx';
import { fullTime } from './format.tsx';
import { ErrorText } from './toasts.tsx';

/**
 * The excerpt of a result with the server's highlights (UTF-16 ranges) as `<mark>`, with an
 * ellipsis where the message goes on before or after it.
 */
function Highlighted({ hit }: { hit: MessageSearchHit }) {
  const { text, highlights: hits, start, end } = hit.excerpt;
  const out: (string | preact.JSX.Element)[] = [start > 0 ? '… ' : ''];
  let at = 0;
  for (const h of hits) {
    if (h.start < at) continue;
    out.push(text.slice(at, h.start));
    out.push(<mark key={h.start}>{text.slice(h.start, h.start + h.length)}</mark>);
    at = h.start + h.length;
  }
  out.push(text.slice(at));
  if (end < (hit.message.text ?? '').length) out.push(' …');
  return (
    <p class="hit-text" dir="auto">
      {out}
    </p>
  );
}

/**
 * Searches the messages of every conversation the person is in on this server (Ctrl+Shift+F).
 * With a workspace of another server on screen, it searches that workspace on its host instead:
 * the filter names the workspace, so the request goes through the relay (web/src/remote), and
 * the results' ids are remembered as the host's, so choosing one opens it there.
 */
export function SearchDialog() {
  const [q, setQ] = useState('');
  const [hits, setHits] = useState<MessageSearchHit[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [order, setOrder] = useState<'NEWEST' | 'RELEVANCE'>('NEWEST');
  const input = useRef<HTMLInputElement>(null);
  const suggestions = suggestionsFor(q);
  useEffect(() => input.current?.focus(), []);
  const close = () => (searchOpen.value = false);
  const [remoteSpace] = useState(() => {
    const id = lastServer.peek();
    const host = hostOfId(id);
    const w = host ? workspaces.peek().find((x) => x.id === id) : undefined;
    return host && w ? { id: w.id, name: w.name, host } : null;
  });
  const run = async (after: string | null, by = order) => {
    const query = q.trim();
    if (!query) return;
    setBusy(true);
    setError(null);
    try {
      const d = await gql<{
        searchMessages: { items: MessageSearchHit[]; nextCursor: string | null };
      }>(SEARCH_MESSAGES, {
        query,
        after,
        order: by,
        ...(remoteSpace ? { filter: { serverId: remoteSpace.id } } : {}),
      });
      rememberUsers(d.searchMessages.items.map((h) => h.message.author));
      setHits(after ? [...(hits ?? []), ...d.searchMessages.items] : d.searchMessages.items);
      setNext(d.searchMessages.nextCursor);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      title={remoteSpace ? `Search ${remoteSpace.name} on ${remoteSpace.host}` : 'Search messages'}
      onClose={close}
      wide
    >
      {remoteSpace && (
        <p class="hint remote-host">
          This workspace is hosted on {remoteSpace.host}: its server searches it, through yours.
        </p>
      )}
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void run(null);
        }}
      >
        <label>
          Words to find
          <input
            ref={input}
            type="search"
            name="q"
            dir="auto"
            maxLength={500}
            value={q}
            autoComplete="off"
            aria-describedby="search-grammar"
            onInput={(e) => setQ(e.currentTarget.value)}
          />
        </label>
        {suggestions.length > 0 && (
          <ul class="plain search-suggestions" aria-label="Suggestions">
            {suggestions.map((s) => (
              <li key={s.text}>
                <button
                  type="button"
                  onClick={() => {
                    setQ(applySuggestion(q, s.text));
                    input.current?.focus();
                  }}
                >
                  <code>{s.text}</code> <span class="muted small">{s.hint}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
        <label>
          Order
          <select
            name="order"
            value={order}
            onChange={(e) => {
              const by = e.currentTarget.value as 'NEWEST' | 'RELEVANCE';
              setOrder(by);
              // A new order is a new search: its pages do not continue the other's.
              if (hits) void run(null, by);
            }}
          >
            <option value="NEWEST">Newest first</option>
            <option value="RELEVANCE">Most relevant</option>
          </select>
        </label>
        <button type="submit" class="primary" disabled={busy || !q.trim()}>
          Search
        </button>
      </form>
      <p class="hint" id="search-grammar">
        Every word must be in the message, in any of its forms (“report” finds “reporting”); case
        and accents do not matter, and Chinese, Japanese or Korean match any two characters or more.{' '}
        <code>"exact phrase"</code>, <code>deploy*</code>, <code>-word</code>,{' '}
        <code>from:@name</code>, <code>in:#channel</code>, <code>before:</code>/<code>after:</code>/
        <code>on:2026-03-01</code>, <code>has:file</code>, <code>has:link</code>,{' '}
        <code>is:thread</code>. Public channels you have not joined are searched too; encrypted
        conversations are not.
      </p>
      <ErrorText error={error} />
      {hits && (
        <p role="status" class="muted">
          {hits.length ? `${hits.length}${next ? '+' : ''} found` : 'Nothing found.'}
        </p>
      )}
      {hits && hits.length > 0 && (
        <ul class="plain search-hits" aria-label="Messages found">
          {hits.map((h) => {
            const c = conversations.value[h.message.conversationId];
            const w = c && workspaces.value.find((x) => x.id === c.serverId);
            const who = h.message.author
              ? (h.message.author.displayName ?? h.message.author.username)
              : 'Deleted account';
            return (
              <li key={h.message.id}>
                <button
                  type="button"
                  class="hit"
                  onClick={() => {
                    close();
                    void jumpToMessage(h.message);
                  }}
                >
                  <span class="muted small" dir="auto">
                    {c ? titleOf(c) : 'A conversation'}
                    {w && !w.isDirect ? ` · ${w.name}` : ''} · {who} ·{' '}
                    {fullTime(h.message.createdAt)}
                    {h.message.threadRootId ? ' · in a thread' : ''}
                    {h.joined ? '' : ' · not joined'}
                  </span>
                  <Highlighted hit={h} />
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {next && (
        <button type="button" disabled={busy} onClick={() => void run(next)}>
          More results
        </button>
      )}
    </Dialog>
  );
}
